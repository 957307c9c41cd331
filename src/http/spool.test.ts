/** The per-request spool (src/http/spool.ts): nothing is left behind, whenever it is disposed. */
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { Spools } from './spool.js';

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
