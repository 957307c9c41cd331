/**
 * Many large uploads at once against a server in another process, and what they do to it: how
 * long they take, how long a health check waits meanwhile, and how much memory the server takes
 * at its peak. Used by upload-load.test.ts (the blog, on each engine) and by `npm run bench`
 * (the blog beside a server written by hand, docs/performance.md). Sends to 127.0.0.1 only, a
 * bounded number of requests, each with a time limit.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

export interface UploadLoadOptions {
  /** `http://127.0.0.1:port` of the server under load. */
  origin: string;
  /** Its process id, whose memory is read from /proc. */
  pid: number;
  /** How many uploads at once (default 50) and how large each file is (default 9 MiB). */
  uploads?: number;
  fileSize?: number;
  /** Where upload `index` goes, and its headers (a bearer token). */
  target: (index: number) => { path: string; headers?: Record<string, string> };
  /** The readiness route probed while the uploads run. */
  healthPath: string;
  /** ms between two health checks (default 50). */
  probeEvery?: number;
  /** ms an upload or a health check may take before the run fails (default 120 s). */
  timeout?: number;
}

export interface UploadLoadResult {
  /** How many answers of each status. */
  statuses: Record<number, number>;
  /** From the first upload sent to the last answer, ms. */
  wallMs: number;
  /** The health checks' times while the uploads ran, ms. */
  health: { count: number; p50: number; p99: number; max: number };
  /** The server's resident memory before, at its peak during the uploads, and after, MiB. */
  rss: { before: number; peak: number; after: number; rise: number };
}

const mib = 1024 * 1024;

/** A value of `/proc/<pid>/status` in MiB (`VmRSS`, `VmHWM`). */
function memoryOf(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1];
  if (kib === undefined) throw new Error(`No ${field} for process ${pid}`);
  return Number(kib) / 1024;
}

/** Resets the process's peak resident memory to its current one (Linux, as its owner or root). */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] as number;
}

/** One form: a file part named `file` of `size` bytes, its head and tail around one shared payload. */
function formOf(size: number): { boundary: string; head: Buffer; payload: Buffer; tail: Buffer } {
  const boundary = 'proceed-upload-load';
  const payload = Buffer.alloc(size);
  for (let index = 0; index < size; index += 4096) payload[index] = index % 251;
  return {
    boundary,
    head: Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="load.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`,
    ),
    payload,
    tail: Buffer.from(`\r\n--${boundary}--\r\n`),
  };
}

/** Sends one request and resolves with its status once the answer is read whole. */
function send(
  origin: string,
  options: { method: string; path: string; headers?: Record<string, string>; body?: Buffer[]; agent: Agent },
  timeout: number,
): Promise<number> {
  const url = new URL(options.path, origin);
  return new Promise((resolve, reject) => {
    const length = (options.body ?? []).reduce((sum, part) => sum + part.byteLength, 0);
    const outgoing = request(
      url,
      {
        method: options.method,
        agent: options.agent,
        headers: { ...options.headers, ...(options.body === undefined ? {} : { 'content-length': length }) },
        timeout,
      },
      (answer) => {
        answer.resume();
        answer.once('end', () => resolve(answer.statusCode ?? 0));
        answer.once('error', reject);
      },
    );
    outgoing.once('timeout', () =>
      outgoing.destroy(new Error(`${options.method} ${options.path}: no answer in ${timeout} ms`)),
    );
    outgoing.once('error', reject);
    for (const part of options.body ?? []) outgoing.write(part);
    outgoing.end();
  });
}

/**
 * Sends `uploads` forms of one `fileSize` file at once while a health check runs every
 * `probeEvery` ms, and measures the server meanwhile.
 */
export async function uploadLoad(options: UploadLoadOptions): Promise<UploadLoadResult> {
  const uploads = options.uploads ?? 50;
  const timeout = options.timeout ?? 120_000;
  const form = formOf(options.fileSize ?? 9 * mib);
  const uploading = new Agent({ keepAlive: false, maxSockets: uploads });
  const probing = new Agent({ keepAlive: true, maxSockets: 1 });
  const before = memoryOf(options.pid, 'VmRSS');
  resetPeak(options.pid);
  const healthTimes: number[] = [];
  let running = true;
  const probe = (async () => {
    while (running) {
      const started = performance.now();
      const status = await send(
        options.origin,
        { method: 'GET', path: options.healthPath, agent: probing },
        timeout,
      );
      if (status !== 200) throw new Error(`${options.healthPath} answered ${status} during the uploads`);
      healthTimes.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, options.probeEvery ?? 50));
    }
  })();
  const started = performance.now();
  let statuses: number[];
  try {
    statuses = await Promise.all(
      Array.from({ length: uploads }, (_, index) => {
        const { path, headers } = options.target(index);
        return send(
          options.origin,
          {
            method: 'POST',
            path,
            headers: { ...headers, 'content-type': `multipart/form-data; boundary=${form.boundary}` },
            body: [form.head, form.payload, form.tail],
            agent: uploading,
          },
          timeout,
        );
      }),
    );
  } finally {
    running = false;
    await probe.catch(() => undefined);
  }
  const wallMs = performance.now() - started;
  await probe;
  const peak = memoryOf(options.pid, 'VmHWM');
  uploading.destroy();
  probing.destroy();
  const sorted = [...healthTimes].sort((a, b) => a - b);
  const counted: Record<number, number> = {};
  for (const status of statuses) counted[status] = (counted[status] ?? 0) + 1;
  return {
    statuses: counted,
    wallMs,
    health: {
      count: sorted.length,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted.at(-1) ?? Number.NaN,
    },
    rss: { before, peak, after: memoryOf(options.pid, 'VmRSS'), rise: Math.max(0, peak - before) },
  };
}
