/** A Fetch request's JSON body, read up to a limit (src/http/fetch.ts). */
import { ProceedError } from '../core/errors.js';
import type { HeaderRecord } from './fetch-core.js';
import { invalidJson, isJsonBody, notJsonBody, refusedKeyOf } from './json.js';
import { lingeringBytes, lingeringMilliseconds, lingersOn, readOnAndDrop } from './lingering.js';
import type { PipelineRequest } from './sent.js';

/**
 * A body sent with a content coding (`Content-Encoding: gzip`): 415 naming the one coding taken,
 * as RFC 9110 asks of a server that does not decode it. Read as it is, a gzip body was "not
 * valid UTF-8", and a header on a plain body was believed by no one.
 */
export function codedBodyRefusal(
  given: string | readonly string[] | null | undefined,
): ProceedError | undefined {
  if (given === null || given === undefined) return undefined;
  const coding = typeof given === 'string' ? given : given.join(', ');
  const named = coding.trim().toLowerCase();
  if (named === '' || named === 'identity') return undefined;
  return new ProceedError(
    'UNSUPPORTED_MEDIA_TYPE',
    `The server does not decode request bodies sent with Content-Encoding: ${coding.trim()}; send the body as it is`,
    { headers: { 'accept-encoding': 'identity' } },
  );
}

/**
 * Why a body that is to be parsed as JSON (a procedure's, an MCP message) cannot be, before a byte
 * is read: a content coding, or a media type other than JSON (both 415). One rule for each reader.
 */
export function jsonBodyRefusal(headers: HeaderRecord): ProceedError | undefined {
  return codedBodyRefusal(headers['content-encoding']) ?? (isJsonBody(headers) ? undefined : notJsonBody());
}

/** The body, read up to the limit: 413 as soon as it passes it, whatever `Content-Length` said. */
export async function readBytes(request: PipelineRequest, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) {
    // Read on and dropped before the answer, so a client still sending it reads the 413, and a
    // runtime that breaks a connection answered mid-body (workerd) is not given one
    // (src/http/lingering.ts).
    const bytes = lingeringBytes(limit);
    if (request.body !== null && lingersOn(request, bytes))
      await readOnAndDrop(request.body.getReader(), bytes, lingeringMilliseconds);
    throw tooLarge();
  }
  try {
    // A declared length frames the body: the runtime reads exactly that much, natively, without
    // the stream a bridge such as @hono/node-server builds only when `body` is asked for.
    if (declared >= 0 && !request.headers.has('transfer-encoding')) {
      const bytes =
        request.bytes === undefined ? new Uint8Array(await request.arrayBuffer()) : await request.bytes();
      // A Request built in-process is not held to its Content-Length by any wire.
      if (bytes.byteLength > limit) throw tooLarge();
      return bytes;
    }
    return await readStream(request, limit);
  } catch (error) {
    if (error instanceof ProceedError) throw error;
    // The client went away, or sent a body its framing cannot carry.
    throw new ProceedError('BAD_REQUEST', 'The request body could not be read');
  }
}

/** A body of unknown length, read up to the limit. */
export async function readStream(request: PipelineRequest, limit: number): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await readOnAndDrop(reader, lingeringBytes(limit) - size, lingeringMilliseconds);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

const tooLarge = () =>
  new ProceedError('PAYLOAD_TOO_LARGE', 'The request body is larger than the server accepts');

/** A JSON body: undefined when empty; 400 when malformed or holding a forbidden key. */
export function parseJson(text: string): unknown {
  if (text === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidJson();
  }
  const refused = refusedKeyOf(text, parsed);
  if (refused !== undefined) throw refused;
  return parsed;
}

/** Whether a request carries a body: said by its headers, else by the runtime. */
export function sendsBody(headers: HeaderRecord, request: PipelineRequest): boolean {
  const length = headers['content-length'];
  if (length !== undefined) return length !== '0';
  return headers['transfer-encoding'] !== undefined || request.body !== null;
}
