/**
 * How a bench server tells the harness where it listens: over the IPC channel the harness opens
 * (so that stdout can go to /dev/null, logs and all, as it would go to a file in production), or
 * as the first line of stdout when run by hand.
 */
export interface ServerInfo {
  address: string;
  token?: string;
  /** A record to read, where the server seeds its own (the blog). */
  postId?: string;
}

export function announce(info: ServerInfo): void {
  if (process.send !== undefined) process.send(info);
  else process.stdout.write(`${JSON.stringify(info)}\n`);
}
