/**
 * What every socket contender of `npm run bench` (bench/sockets.ts) does per message, so that
 * only the framework differs: the same schema validates what a client sends, the same message
 * goes out.
 */
import { z } from 'zod';

/** What the echo takes and sends back. */
export const Said = z.object({ text: z.string().max(200) });

/** What the push sends, as fast as its client takes it: about 100 bytes of JSON. */
export const pushed = { text: 'x'.repeat(80) };
export const Pushed = z.object({ text: z.string() });

/** A sender holds at most this many bytes unsent before it waits for its client. */
export const sendBuffer = 1024 * 1024;
