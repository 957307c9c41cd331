/**
 * Proceed's file answers and event streams for `npm run bench:streams` (bench/streams.ts): files
 * from BENCH_FILES_DIR, an idle stream that holds until its client leaves, a stream faster than
 * any reader, an upload that takes a form with a file of up to 2 GiB and reads it through, and
 * routes of the bench's own (memory, when each idle stream's finally ran). Runs on Node, and on
 * Bun and Deno (app.fetch in their own servers).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp, download, eventStream, fileAt, procedure, procedures, serverEvent } from 'proceedjs';
import { z } from 'zod';
import { announce } from './announce.js';

const directory = process.env.BENCH_FILES_DIR ?? '.';
const Tick = z.object({ n: z.number(), text: z.string() });
/** When (epoch ms) each idle stream's finally ran, for the latency after a client leaves. */
const finallies: number[] = [];
const now = () => performance.timeOrigin + performance.now();
const line = 'x'.repeat(80);

const api = procedures('bench', {
  fileOf: procedure()
    .rest({ method: 'GET', path: '/files/:name' })
    .input(z.object({ name: z.enum(['big.bin', 'ten.bin']) }))
    .output(download())
    .query(({ input }) => fileAt(join(directory, input.name), { type: 'application/octet-stream' })),
  idleEvents: procedure()
    .rest({ method: 'GET', path: '/ticks/idle' })
    .output(eventStream(Tick))
    .query(async function* ({ signal }) {
      try {
        yield serverEvent({ n: 0, text: 'open' }, { id: 0 });
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      } finally {
        finallies.push(now());
      }
    }),
  fastEvents: procedure()
    .rest({ method: 'GET', path: '/ticks/fast' })
    .output(eventStream(Tick))
    .query(async function* () {
      for (let n = 0; ; n++) yield { n, text: line };
    }),
  // What the upload itself costs: the handler only looks at the file.
  createUpload: procedure()
    .rest({ method: 'POST', path: '/uploads' })
    .input(z.object({ file: z.file() }))
    .uploads({ fileSize: 2 * 1024 * 1024 * 1024, files: 1 })
    .mutation(({ input }) => ({ size: input.file.size })),
  readUpload: procedure()
    .rest({ method: 'POST', path: '/uploads/read' })
    .input(z.object({ file: z.file() }))
    .uploads({ fileSize: 2 * 1024 * 1024 * 1024, files: 1 })
    .mutation(async ({ input }) => {
      // Read through, as a handler that stores the file elsewhere would.
      let size = 0;
      for await (const chunk of input.file.stream() as unknown as AsyncIterable<Uint8Array>)
        size += chunk.byteLength;
      return { size };
    }),
  memory: procedure()
    .rest({ method: 'GET', path: '/memory' })
    .query(() => {
      const { rss, heapUsed } = process.memoryUsage();
      return { rss, heapUsed };
    }),
  finallies: procedure()
    .rest({ method: 'GET', path: '/finallies' })
    .query(() => ({ at: finallies.splice(0) })),
  collect: procedure()
    .rest({ method: 'POST', path: '/collect' })
    .mutation(() => {
      (globalThis as { gc?: () => void }).gc?.();
      return { collected: true };
    }),
});

export const app = createApp({ logger: false, maxConnections: 15_000 }).mount([api]);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  announce({
    address: await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false, logRoutes: false }),
  });
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}
