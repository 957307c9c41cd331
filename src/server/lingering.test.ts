import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { lingeringBytes, lingersOn } from '../http/lingering.js';
import { lingerOnUnreadBody } from './lingering.js';

describe('the lingering rule', () => {
  it('reads on at least 10 MiB, or the route’s own limit when more', () => {
    expect(lingeringBytes(1024)).toBe(10 * 1024 * 1024);
    expect(lingeringBytes(50 * 1024 * 1024)).toBe(50 * 1024 * 1024);
  });

  it('reads on a body of unknown length or one declared within the bound, never one declared past it', () => {
    expect(lingersOn(undefined, 100)).toBe(true);
    expect(lingersOn('100', 100)).toBe(true);
    expect(lingersOn('101', 100)).toBe(false);
    expect(lingersOn('lots', 100)).toBe(false);
  });
});

describe('lingerOnUnreadBody off a socket', () => {
  it('reads nothing on for an injected request, whose socket cannot be closed', () => {
    const injected = Object.assign(new PassThrough(), {
      complete: undefined,
      headers: { 'content-length': '10' },
      socket: {},
    });
    expect(lingerOnUnreadBody(injected as unknown as IncomingMessage, 1024)).toBe(true);
    expect(injected.listenerCount('data')).toBe(0);
  });
});

describe('lingerOnUnreadBody on Node', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
    server?.closeAllConnections();
  });

  /** A server that refuses every request before reading its body, reading on up to `bytes`. */
  async function refusing(bytes: number): Promise<number> {
    server = createServer((request, response) => {
      const lingers = lingerOnUnreadBody(request, bytes);
      response.writeHead(403, lingers ? {} : { connection: 'close' }).end('refused');
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  }

  /** Sends a chunked body of `chunks` 64 KiB chunks, never ended; settles with what came back once the socket closes. */
  function sendChunked(port: number, chunks: number): Promise<{ answer: string; closed: boolean }> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      socket.on('data', (data: Buffer) => {
        answer += data.toString('latin1');
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve({ answer, closed: true }));
      socket.write('POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n');
      const chunk = `10000\r\n${'x'.repeat(0x10000)}\r\n`;
      let sent = 0;
      const more = () => {
        while (sent < chunks) {
          sent++;
          if (!socket.write(chunk)) return void socket.once('drain', more);
        }
        // Everything sent, nothing ended: only the server's bound closes this.
        setTimeout(() => resolve({ answer, closed: socket.destroyed }), 500);
      };
      more();
    });
  }

  it('closes the connection once a refused body passes the bound, after the answer went out', async () => {
    const port = await refusing(1024 * 1024);
    const { answer, closed } = await sendChunked(port, 64);
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(closed).toBe(true);
  });

  it('keeps reading a refused body within the bound, the connection open', async () => {
    const port = await refusing(16 * 1024 * 1024);
    const { answer, closed } = await sendChunked(port, 32);
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(closed).toBe(false);
  });
});
