/** The live socket's following, apart from any socket: a client that stops reading is let go. */
import { ProceedError } from 'proceedjs';
import { describe, expect, it } from 'vitest';
import type { FeedEvent } from './feed.js';
import { followLive, type LiveRequest } from './live.js';

const author = '00000000-0000-4000-8000-00000000000a';
const other = '00000000-0000-4000-8000-00000000000b';
const event = (n: number, authorId = author): FeedEvent => ({
  id: String(n),
  authorId,
  post: { id: `p${n}`, title: `Post ${n}`, excerpt: '' },
});

/** A socket whose client sends `requests`, then keeps it open without another word. */
function socketOf(requests: LiveRequest[], send: (post: unknown) => Promise<void>) {
  let publish: (events: readonly FeedEvent[]) => void = () => undefined;
  let subscribers = 0;
  const feed = {
    subscribe(listener: (events: readonly FeedEvent[]) => void) {
      subscribers++;
      publish = listener;
      return () => {
        subscribers--;
      };
    },
  };
  async function* messages() {
    yield* requests;
    await new Promise(() => undefined);
  }
  return {
    feed,
    messages: messages(),
    send,
    refuse: () => undefined,
    publish: (events: FeedEvent[]) => publish(events),
    subscribers: () => subscribers,
  };
}

describe('following live posts', () => {
  it("sends a followed author's posts in order, one at a time, and no one else's", async () => {
    const sent: unknown[] = [];
    const socket = socketOf([{ type: 'subscribe', authorId: author }], async (message) => {
      sent.push(message);
    });
    void followLive(socket, 10);
    await new Promise((resolve) => setTimeout(resolve, 0));
    socket.publish([event(1), event(2, other), event(3)]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(sent).toEqual([
      { type: 'post', post: event(1).post },
      { type: 'post', post: event(3).post },
    ]);
  });

  it('ends with a 429 problem once more posts wait than the backlog, and stops following', async () => {
    // A client that reads nothing: no send ever completes.
    const socket = socketOf([{ type: 'subscribe', authorId: author }], () => new Promise(() => undefined));
    const following = followLive(socket, 3);
    await new Promise((resolve) => setTimeout(resolve, 0));
    socket.publish([event(1), event(2), event(3)]);
    expect(socket.subscribers()).toBe(1);
    socket.publish([event(4)]);
    const ended = await following.catch((error: unknown) => error);
    expect(ended).toBeInstanceOf(ProceedError);
    expect(ended).toMatchObject({
      code: 'RATE_LIMITED',
      message: 'More than 3 posts wait for this socket to read them',
    });
    expect(socket.subscribers()).toBe(0);
  });
});
