/**
 * The per-request spool (src/http/spool.ts): nothing is left behind, whenever it is disposed; and
 * `saveFile`, which links what it spooled.
 */
import { mkdtempSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { procedure, procedures } from '../core/procedure.js';
import { createApp } from '../server/create-app.js';
import { Spools, saveFile } from './spool.js';

// The spools' directories are counted: in a temporary directory of this file's own (the spool
// reads TMPDIR at each upload), so that uploads of other test files running beside it do not count.
const ownTemporary = mkdtempSync(join(tmpdir(), 'proceed-spool-test-'));
process.env.TMPDIR = ownTemporary;
afterAll(() => rm(ownTemporary, { recursive: true, force: true }));

const spooled = async () =>
  (await readdir(tmpdir())).filter((name) => name.startsWith('proceed-upload-')).length;

describe('a spool', () => {
  it('makes no directory when disposed while its first file is being created', async () => {
    const before = await spooled();
    const spools = new Spools();
    for (let round = 0; round < 20; round++) {
      const spool = spools.create();
      const creating = spool.create();
      await spool.dispose();
      await expect(creating).rejects.toThrow('The upload ended before its file was stored');
    }
    await spools.disposeAll();
    expect(await spooled()).toBe(before);
  });

  it('removes its files, written or half-written, and the directory', async () => {
    const before = await spooled();
    const spool = new Spools().create();
    const whole = await spool.create();
    await whole.write(new Uint8Array(10));
    const file = await whole.finish('a.bin', 'application/octet-stream');
    expect(file.size).toBe(10);
    const half = await spool.create();
    await half.write(new Uint8Array(5));
    expect(await spooled()).toBe(before + 1);
    await spool.dispose();
    expect(await spooled()).toBe(before);
  });
});

describe('saveFile', () => {
  const scratch = async () => mkdtemp(join(tmpdir(), 'proceed-save-file-'));

  it('links a spooled upload instead of copying it, and the upload stays readable', async () => {
    const directory = await scratch();
    const spool = new Spools().create();
    try {
      const part = await spool.create();
      await part.write(new TextEncoder().encode('spooled bytes'));
      const file = await part.finish('a.txt', 'text/plain');
      const destination = join(directory, 'kept.txt');
      await saveFile(file, destination);
      expect(await readFile(destination, 'utf8')).toBe('spooled bytes');
      // The same file on disk, two names: no byte was copied.
      expect((await stat(destination)).nlink).toBe(2);
      expect(await file.text()).toBe('spooled bytes');
      await spool.dispose();
      // The spool's name goes with its directory; the saved one stays.
      expect((await stat(destination)).nlink).toBe(1);
      expect(await readFile(destination, 'utf8')).toBe('spooled bytes');
    } finally {
      await spool.dispose();
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('streams any other Blob, refuses a path that exists, and removes a copy that failed', async () => {
    const directory = await scratch();
    try {
      const destination = join(directory, 'copied.bin');
      await saveFile(new Blob([new Uint8Array(300_000).fill(7)]), destination);
      expect((await readFile(destination)).equals(Buffer.alloc(300_000, 7))).toBe(true);
      expect((await stat(destination)).nlink).toBe(1);
      await expect(saveFile(new Blob(['again']), destination)).rejects.toMatchObject({ code: 'EEXIST' });
      const failing = {
        stream: () =>
          new ReadableStream<Uint8Array>({
            pull(controller) {
              controller.enqueue(new Uint8Array(10));
              controller.error(new Error('the client left'));
            },
          }),
      } as unknown as Blob;
      const broken = join(directory, 'broken.bin');
      await expect(saveFile(failing, broken)).rejects.toThrow('the client left');
      expect(await readdir(directory)).toEqual(['copied.bin']);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('an upload whose spool cannot be written', () => {
  it('is a 503 whose cause is logged, not the client’s 400, and runs nothing', async () => {
    const photos = procedures('photos', {
      createPhoto: procedure()
        .input(z.object({ photo: z.file() }))
        .mutation(() => {
          throw new Error('the handler ran');
        }),
    });
    const lines: string[] = [];
    const app = createApp({ logger: { level: 'warn', stream: { write: (line) => lines.push(line) } } }).mount(
      [photos],
    );
    // A temporary directory that is a file: no spool can be made in it (as with no descriptor left).
    const notADirectory = join(ownTemporary, 'a-file');
    await writeFile(notADirectory, '');
    process.env.TMPDIR = notADirectory;
    try {
      const form = new FormData();
      form.set('photo', new File([new Uint8Array(2 * 1024 * 1024)], 'large.bin'));
      const answer = await app.fetch(new Request('http://x/api/photos', { method: 'POST', body: form }));
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).not.toBeNull();
      expect(await answer.json()).toMatchObject({
        code: 'UNAVAILABLE',
        detail: 'The server could not store the upload now; retry shortly',
      });
      const warnings = lines.filter((line) => JSON.parse(line).level === 40);
      expect(warnings).toEqual([expect.stringContaining('ENOTDIR: not a directory')]);
    } finally {
      process.env.TMPDIR = ownTemporary;
      await app.close();
    }
  });
});
