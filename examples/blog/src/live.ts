/**
 * The live socket's work (docs/blog.md, "The live socket"): follow authors as the client asks,
 * and send each post of theirs as it becomes published, in order, each once the client can take
 * it. A client that stops reading is not followed forever: past `backlog` posts waiting for it,
 * the socket ends with a problem (1008), rather than the server keeping every post for it.
 */
import { ProceedError, ValidationError } from 'proceedjs';
import type { FeedEvent } from './feed.js';

/** What the live socket receives, checked. */
export type LiveRequest = { type: 'subscribe' | 'unsubscribe'; authorId: string };

export interface LiveSocket {
  readonly feed: { subscribe(listener: (events: readonly FeedEvent[]) => void): () => void };
  readonly messages: AsyncIterable<LiveRequest>;
  readonly send: (message: { type: 'post'; post: FeedEvent['post'] }) => Promise<void>;
  readonly refuse: (error: unknown) => void;
}

/** The most authors one socket follows. */
export const liveSubscriptions = 100;

export async function followLive(
  { feed, messages, send, refuse }: LiveSocket,
  backlog: number,
): Promise<void> {
  const followed = new Set<string>();
  let sending = Promise.resolve();
  let waiting = 0;
  let overrun: (error: Error) => void = () => undefined;
  const overran = new Promise<never>((_, reject) => {
    overrun = reject;
  });
  const unsubscribe = feed.subscribe((events) => {
    for (const event of events) {
      if (!followed.has(event.authorId)) continue;
      if (waiting >= backlog) {
        overrun(
          new ProceedError('RATE_LIMITED', `More than ${backlog} posts wait for this socket to read them`),
        );
        return;
      }
      waiting++;
      // A post that did not fit the view would end the socket with 1011, logged: nothing to add.
      sending = sending
        .then(() => send({ type: 'post', post: event.post }))
        .catch(() => undefined)
        .finally(() => {
          waiting--;
        });
    }
  });
  const follow = async () => {
    for await (const request of messages) {
      if (request.type === 'unsubscribe') followed.delete(request.authorId);
      else if (followed.size >= liveSubscriptions && !followed.has(request.authorId))
        refuse(
          new ValidationError([
            { path: 'authorId', message: `A socket follows at most ${liveSubscriptions} authors` },
          ]),
        );
      else followed.add(request.authorId);
    }
  };
  try {
    await Promise.race([follow(), overran]);
  } finally {
    unsubscribe();
  }
}
