import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProceedConfigError } from 'proceedjs';
import { afterAll, describe, expect, it } from 'vitest';
import { createBlogApp } from '../app.js';
import { writableDirectory } from './writable.js';

const root = await mkdtemp(join(tmpdir(), 'proceed-writable-'));
afterAll(() => rm(root, { recursive: true, force: true }));

describe('writableDirectory', () => {
  it('makes a missing directory, nested', async () => {
    await writableDirectory(join(root, 'a', 'b'), 'ATTACHMENTS_DIR');
    expect((await stat(join(root, 'a', 'b'))).isDirectory()).toBe(true);
  });

  it('refuses a file in the way with a configuration error naming the setting', async () => {
    const file = join(root, 'file');
    await writeFile(file, '');
    for (const path of [file, join(file, 'below')]) {
      const refused = writableDirectory(path, 'ATTACHMENTS_DIR');
      await expect(refused).rejects.toBeInstanceOf(ProceedConfigError);
      await expect(refused).rejects.toThrow(/\(ATTACHMENTS_DIR\): E(EXIST|NOTDIR)/);
    }
  });

  it('stops the blog at start-up when its attachments cannot be written, before it serves', async () => {
    const file = join(root, 'in-the-way');
    await writeFile(file, '');
    await expect(
      createBlogApp({
        databaseUrl: 'memory://',
        attachmentsDirectory: join(file, 'attachments'),
        jwtSecret: 'x'.repeat(32),
        logger: false,
      }),
    ).rejects.toThrow(/^Cannot write to the directory .*in-the-way\/attachments \(ATTACHMENTS_DIR\)/);
  });
});

describe('the blog in production on the embedded database', () => {
  it('starts, and says at warn that its data lives on this machine only', async () => {
    const lines: { level: number; msg: string }[] = [];
    const app = await createBlogApp({
      databaseUrl: 'memory://',
      production: true,
      jwtSecret: 'k3Jq9vX2mB7tR4wZ8nC1pL6hF5dG0sYe',
      logger: { stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
    });
    await app.close();
    expect(lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual([
      expect.stringMatching(
        /^NODE_ENV=production on the embedded database \(PGlite\).*DATABASE_URL=postgres/,
      ),
    ]);
  });
});
