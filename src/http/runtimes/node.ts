/** Node.js (docs/deployment.md): Fastify on `node:http`, or app.fetch behind a bridge. */
import type { Runtime } from './common.js';

/** `@hono/node-server` passes the Node request beside the `Request`. */
interface NodeBridgeArgument {
  incoming?: { socket?: { remoteAddress?: unknown; remotePort?: unknown } };
}

/** A `File` over a file on disk, read as it is sent (Node's and Bun's `openAsBlob`). */
export async function openedFile(path: string, _size: number, name: string, type: string): Promise<File> {
  const { openAsBlob } = await import('node:fs');
  const blob = await openAsBlob(path, { type });
  return new File([blob], name, { type });
}

export const node: Runtime = {
  name: 'Node.js',
  peerAddress(_request, argument) {
    const remote = (argument as NodeBridgeArgument | undefined)?.incoming?.socket?.remoteAddress;
    return typeof remote === 'string' ? remote : undefined;
  },
  peerPort(_request, argument) {
    const port = (argument as NodeBridgeArgument | undefined)?.incoming?.socket?.remotePort;
    return typeof port === 'number' ? port : undefined;
  },
  spoolsToDisk: true,
  diskFile: openedFile,
  compresses: true,
  namesConnections: true,
  readsRefusedBodies: false,
  streamsKeepLength: true,
  listens: true,
  serve: undefined,
  hasStandardOutput: true,
  importsTypeScript: false,
  xxHash64: undefined,
  // On Node the app's own server opens sockets (src/server/sockets.ts), not app.fetch.
  upgradeSocket: undefined,
  socketHandlers: undefined,
  sharesRequestObjects: true,
};
