/**
 * A connection flood against a server process with few file descriptors (docs/deployment.md,
 * "Connection limits"). A process out of descriptors cannot accept: Node then drops new clients
 * without an answer. With the default connection limit (the descriptor limit less a reserve)
 * the server never gets there: each new client sheds the connection that waited longest on its
 * client, and is served. `npm run bench:flood` measures the same with 25,000 connections.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { launch, root } from './processes.js';

/** The built package, 256 descriptors, the default limit: a small app printing its port. */
const server = `
  const { createApp, procedure, procedures } = await import(${JSON.stringify(`${root}/dist/index.js`)});
  let creates = 0;
  const things = procedures('things', {
    listThings: procedure().query(() => ({ creates })),
    createThing: procedure().mutation(() => ({ id: ++creates })),
  });
  const app = createApp({ logger: false }).mount([things]);
  console.log('listening ' + (await app.listen({ port: 0, handleSignals: true, logRoutes: false })));
`;

/** A connection that sends complete headers and then never finishes its body. */
function stalled(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      socket.write(
        'POST /api/things HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
      );
      resolve(socket);
    });
  });
}

/** A new client's request on a connection of its own: the status, or what became of it. */
function newClient(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    socket.on('close', () => resolve(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 'closed without an answer'));
    socket.on('connect', () =>
      socket.write('GET /api/things HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'),
    );
  });
}

describe('a flood of stalled connections against a process with 256 file descriptors', () => {
  it('keeps answering new clients, and runs none of the stalled requests', async () => {
    const app = launch('sh', [
      '-c',
      `ulimit -n 256 && exec "${process.execPath}" --input-type=module -e "$0"`,
      server,
    ]);
    await app.waitFor(/listening http:\/\/\S+/);
    const port = Number(new URL(/listening (\S+)/.exec(app.output())?.[1] ?? '').port);

    const flood: Socket[] = [];
    for (let index = 0; index < 400; index++) flood.push(await stalled(port));
    const outcomes: string[] = [];
    for (let index = 0; index < 10; index++) outcomes.push(await newClient(port));
    expect(outcomes).toEqual(Array.from({ length: 10 }, () => '200'));
    // The oldest stalled connections were shed to make room; their requests never ran.
    expect(flood.filter((socket) => socket.destroyed || socket.readableEnded).length).toBeGreaterThan(0);
    for (const socket of flood) socket.destroy();
    const count = await fetch(`http://127.0.0.1:${port}/api/things`).then((response) => response.json());
    expect(count).toEqual({ creates: 0 });
  });
});
