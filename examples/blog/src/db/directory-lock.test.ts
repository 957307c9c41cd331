import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { lockDirectory, lockFileName, staleAfterMs } from './directory-lock.js';

const scratch = mkdtempSync(join(tmpdir(), 'blog-lock-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let count = 0;
function directory(): string {
  count += 1;
  const path = join(scratch, `db-${count}`);
  mkdirSync(path);
  return path;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A process that stays alive until killed: the pid a lock can name. */
function aliveProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(child);
  return new Promise((resolve) => child.once('spawn', () => resolve(child)));
}

function writeLock(
  path: string,
  holder: { pid: number; hostname: string },
  ageMs = 0,
  extra: { started?: string | undefined } = {},
): void {
  const file = join(path, lockFileName);
  writeFileSync(file, JSON.stringify({ ...holder, since: '2026-01-01T00:00:00.000Z', ...extra }));
  const when = new Date(Date.now() - ageMs);
  utimesSync(file, when, when);
}

describe('lockDirectory', () => {
  it('takes a free directory, names this process in the lock, and removes it on release', async () => {
    const path = directory();
    const lock = await lockDirectory(path);
    expect(JSON.parse(readFileSync(lock.file, 'utf8'))).toMatchObject({
      pid: process.pid,
      hostname: hostname(),
    });
    await lock.release();
    await lock.release();
    expect(existsSync(lock.file)).toBe(false);
    const again = await lockDirectory(path);
    await again.release();
  });

  it('refuses a second open from this same process', async () => {
    const path = directory();
    const lock = await lockDirectory(path);
    await expect(lockDirectory(path)).rejects.toThrow(/is in use by another process/);
    await lock.release();
  });

  it('refuses a directory another live process holds, naming it', async () => {
    const path = directory();
    const holder = await aliveProcess();
    writeLock(path, { pid: holder.pid as number, hostname: hostname() });
    await expect(lockDirectory(path)).rejects.toThrow(
      new RegExp(`is in use by another process \\(pid ${holder.pid}, since 2026-01-01T00:00:00.000Z\\)`),
    );
    expect(JSON.parse(readFileSync(join(path, lockFileName), 'utf8')).pid).toBe(holder.pid);
  });

  it('takes over the lock of a process that died', async () => {
    const path = directory();
    const dead = await aliveProcess();
    const pid = dead.pid as number;
    dead.kill('SIGKILL');
    await new Promise((resolve) => dead.once('exit', resolve));
    writeLock(path, { pid, hostname: hostname() });
    const lock = await lockDirectory(path);
    expect(JSON.parse(readFileSync(lock.file, 'utf8')).pid).toBe(process.pid);
    await lock.release();
  });

  it.skipIf(!existsSync('/proc/self/stat'))(
    'takes over the lock of a zombie: dead, under a parent that never reaps it',
    async () => {
      const path = directory();
      // The shell becomes `sleep`, which never waits for the child that has already exited.
      const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 60'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      children.push(parent);
      const pid = await new Promise<number>((resolve) =>
        parent.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
      );
      const zombie = async () => /\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      while (!(await zombie())) await new Promise((resolve) => setTimeout(resolve, 10));
      writeLock(path, { pid, hostname: hostname() });
      const lock = await lockDirectory(path);
      expect(JSON.parse(readFileSync(lock.file, 'utf8')).pid).toBe(process.pid);
      await lock.release();
    },
  );

  it.skipIf(!existsSync('/proc/self/stat'))(
    'takes over a fresh lock whose pid now belongs to a process started later, and refuses the holder itself',
    async () => {
      const path = directory();
      const unrelated = await aliveProcess();
      const pid = unrelated.pid as number;
      const started = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19];
      writeLock(path, { pid, hostname: hostname() }, 0, { started });
      await expect(lockDirectory(path)).rejects.toThrow(/is in use by another process/);
      writeLock(path, { pid, hostname: hostname() }, 0, { started: '1' });
      const lock = await lockDirectory(path);
      await lock.release();
    },
  );

  it('records its own start time in the lock where the system tells it', async () => {
    const path = directory();
    const lock = await lockDirectory(path);
    const written = JSON.parse(readFileSync(lock.file, 'utf8')) as { started?: string };
    expect(written.started === undefined).toBe(!existsSync('/proc/self/stat'));
    await lock.release();
  });

  it('refuses a fresh lock naming this very pid (another pid namespace: a container on the same volume)', async () => {
    const path = directory();
    writeLock(path, { pid: process.pid, hostname: hostname() });
    await expect(lockDirectory(path)).rejects.toThrow(/is in use by another process/);
    // Unrefreshed, it is a container restarted as the same pid after a crash: taken over.
    writeLock(path, { pid: process.pid, hostname: hostname() }, staleAfterMs + 1000);
    const lock = await lockDirectory(path);
    await lock.release();
  });

  it('takes over the lock of a live process that stopped refreshing it (its pid reused)', async () => {
    const path = directory();
    const unrelated = await aliveProcess();
    writeLock(path, { pid: unrelated.pid as number, hostname: hostname() }, staleAfterMs + 1000);
    const lock = await lockDirectory(path);
    await lock.release();
  });

  it('lets exactly one of several processes take over an abandoned lock at once', async () => {
    const path = directory();
    writeLock(path, { pid: 1, hostname: 'gone-host' }, staleAfterMs + 1000);
    const script = `
      const { lockDirectory } = await import(${JSON.stringify(new URL('./directory-lock.ts', import.meta.url).href)});
      try { await lockDirectory(${JSON.stringify(path)}); console.log('took'); setTimeout(() => {}, 3000); }
      catch (error) { console.log('refused'); }
    `;
    const contenders = Array.from({ length: 4 }, () =>
      spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    children.push(...contenders);
    const outcomes = await Promise.all(
      contenders.map(
        (child) =>
          new Promise<string>((resolve) => {
            let text = '';
            child.stdout?.on('data', (chunk: Buffer) => {
              text += chunk.toString();
              if (/took|refused/.test(text)) resolve(text.trim());
            });
            child.once('exit', () => resolve(text.trim()));
          }),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === 'took')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'refused')).toHaveLength(3);
  });

  it('refuses a fresh lock from another machine, and takes over one left unrefreshed', async () => {
    const path = directory();
    writeLock(path, { pid: 1, hostname: 'another-host' });
    await expect(lockDirectory(path)).rejects.toThrow(/in use by a process on another-host \(pid 1/);
    writeLock(path, { pid: 1, hostname: 'another-host' }, staleAfterMs + 1000);
    const lock = await lockDirectory(path);
    await lock.release();
  });

  it('leaves a lock alone that is no longer its own', async () => {
    const path = directory();
    const lock = await lockDirectory(path);
    const holder = await aliveProcess();
    writeLock(path, { pid: holder.pid as number, hostname: hostname() });
    await lock.release();
    expect(JSON.parse(readFileSync(lock.file, 'utf8')).pid).toBe(holder.pid);
  });
});
