/**
 * What an app loads only when it needs it (docs/performance.md, "Cold start"): the multipart
 * parser is loaded by the first form a route reads, not by importing `proceedjs`; an app of
 * `proceedjs/node` never loads Fastify, listening and answering included. Run in a process of its
 * own, against the built package as an app imports it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { root } from './processes.js';

const run = promisify(execFile);

const script = `
import { createRequire } from 'node:module';
import { createApp, procedure, procedures } from 'proceedjs';
import { z } from 'zod';
const { cache } = createRequire(import.meta.url);
const busboyLoaded = () => Object.keys(cache).some((path) => path.includes('/node_modules/busboy/'));
const atImport = busboyLoaded();
const createNote = procedure()
  .input(z.object({ title: z.string(), file: z.file() }))
  .mutation(async ({ input }) => ({ title: input.title, text: await input.file.text() }));
const app = createApp({ logger: false }).mount([procedures('notes', { createNote })]);
const afterMount = busboyLoaded();
const form = new FormData();
form.set('title', 'A note');
form.set('file', new File(['hello'], 'note.txt', { type: 'text/plain' }));
const answer = await app.fetch(new Request('http://127.0.0.1/api/notes', { method: 'POST', body: form }));
console.log(JSON.stringify({ atImport, afterMount, status: answer.status, body: await answer.json(), afterForm: busboyLoaded() }));
await app.close();
`;

/** An app of `entry` that listens and answers; with `askServer`, it asks for `app.server` first. */
const listening = (entry: string, askServer = false) => `
import { createRequire } from 'node:module';
import { createApp, procedure, procedures } from '${entry}';
import { z } from 'zod';
const { cache } = createRequire(import.meta.url);
const fastifyLoaded = () =>
  Object.keys(cache).some((path) => ['/fastify/', '/find-my-way/', '/light-my-request/', '/avvio/'].some((name) => path.includes('/node_modules' + name)));
const getNote = procedure().input(z.object({ id: z.string() })).query(({ input }) => ({ id: input.id }));
const app = createApp({ logger: false }).mount([procedures('notes', { getNote })]);
${askServer ? "app.server.get('/raw', async () => 'raw');" : ''}
const origin = await app.listen({ port: 0, handleSignals: false, logRoutes: false });
const answer = await fetch(origin + '/api/notes/7');
console.log(JSON.stringify({ status: answer.status, body: await answer.json(), fastifyLoaded: fastifyLoaded() }));
await app.close();
`;

describe('modules loaded when needed', { timeout: 60_000 }, () => {
  it.each(['proceedjs/node', 'proceedjs'])(
    'loads nothing of Fastify for an app of %s that never asks for app.server, which listens and answers',
    async (entry) => {
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', listening(entry)], {
        cwd: root,
      });
      expect(JSON.parse(stdout)).toEqual({ status: 200, body: { id: '7' }, fastifyLoaded: false });
    },
  );

  it('loads Fastify once an app of proceedjs asks for app.server', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', listening('proceedjs', true)],
      {
        cwd: root,
      },
    );
    expect(JSON.parse(stdout)).toEqual({ status: 200, body: { id: '7' }, fastifyLoaded: true });
  });

  it('loads the multipart parser at the first form, not with proceedjs, and reads that form', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    expect(JSON.parse(stdout)).toEqual({
      atImport: false,
      afterMount: false,
      status: 201,
      body: { title: 'A note', text: 'hello' },
      afterForm: true,
    });
  });
});
