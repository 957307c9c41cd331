import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Credentials } from '../core/credentials.js';
import { ValidationError } from '../core/errors.js';
import { type SocketAnswer, type SocketChannel, socketDefaults } from '../core/sockets.js';
import { completedHandshake, sentStatus } from './handshake.js';
import { OpenSockets } from './open-sockets.js';
import { type SocketPeer, SocketSession } from './sockets.js';

/** What a runtime's socket was asked to do, in order. */
class RecordingPeer implements SocketPeer {
  readonly sent: unknown[] = [];
  closedWith: { code: number; reason: string } | undefined;
  terminated = false;
  pings = 0;
  bufferedBytes = 0;
  readonly tellsDrain = true;
  readonly ping = () => {
    this.pings++;
  };

  send(text: string): void {
    this.sent.push(JSON.parse(text));
  }

  buffered(): number {
    return this.bufferedBytes;
  }

  close(code: number, reason: string): void {
    this.closedWith = { code, reason };
  }

  terminate(): void {
    this.terminated = true;
  }
}

const silentLog = { error: () => undefined, warn: () => undefined, info: () => undefined };

/** A session whose handler is `run`, its messages validated as `{ text: string }`. */
function sessionOf(
  run: (channel: SocketChannel) => Promise<void>,
  limits: Partial<typeof socketDefaults> = {},
  sockets = new OpenSockets(10),
  credentials?: Credentials,
  stillAllowed?: () => Promise<boolean>,
) {
  let closing: (() => void) | undefined;
  const answer: SocketAnswer = {
    credentials,
    stillAllowed,
    limits: { ...socketDefaults, ...limits },
    check: (message) => {
      const text = (message as { text?: unknown } | null)?.text;
      if (typeof text !== 'string')
        throw new ValidationError([{ path: 'text', message: 'Expected a string' }]);
      return { text };
    },
    run,
  };
  const lines: { fields: object; message: string | undefined }[] = [];
  const log = {
    ...silentLog,
    info: (fields: object | string, message?: string) =>
      lines.push({ fields: typeof fields === 'string' ? {} : fields, message }),
  };
  const session = new SocketSession(answer, {
    exposeErrors: false,
    log,
    procedure: 'chat.joinRoom',
    sockets,
    client: 'address 127.0.0.1',
    onClosing: (listener) => {
      closing = listener;
      return () => {
        closing = undefined;
      };
    },
  });
  const peer = new RecordingPeer();
  session.open(peer);
  return { session, peer, sockets, lines, shutDown: () => closing?.() };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

afterEach(() => {
  vi.useRealTimers();
});

describe('SocketSession', () => {
  it('hands valid messages to the handler and answers each invalid one with its problem, closing with 1008 at the limit', async () => {
    const taken: unknown[] = [];
    const { session, peer } = sessionOf(
      async ({ messages }) => {
        for await (const message of messages) taken.push(message);
      },
      { invalidLimit: 3 },
    );
    session.received('{"text":"hi"}', false);
    session.received('{"text":', false);
    session.received(new Uint8Array([1, 2]), true);
    await settle();
    expect(taken).toEqual([{ text: 'hi' }]);
    expect(peer.sent).toMatchObject([
      { type: 'error', problem: { status: 400, code: 'INVALID_JSON' } },
      { type: 'error', problem: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' } },
    ]);
    expect(peer.closedWith).toBeUndefined();
    session.received('{"other":1}', false);
    expect(peer.sent.at(-1)).toMatchObject({ problem: { code: 'VALIDATION_FAILED' } });
    expect(peer.closedWith).toEqual({ code: 1008, reason: '3 invalid messages' });
  });

  it('refuses a message holding a key no JSON body may hold (__proto__), as a body is refused', async () => {
    const taken: unknown[] = [];
    const { session, peer } = sessionOf(async ({ messages }) => {
      for await (const message of messages) taken.push(message);
    });
    session.received('{"text":"hi","__proto__":{"isAdmin":true}}', false);
    session.received('{"text":"hi","meta":{"constructor":{"prototype":{}}}}', false);
    await settle();
    expect(taken).toEqual([]);
    expect(peer.sent).toMatchObject([
      { type: 'error', problem: { status: 400, code: 'VALIDATION_FAILED', errors: [{ path: '__proto__' }] } },
      { type: 'error', problem: { errors: [{ path: 'meta.constructor' }] } },
    ]);
  });

  it('lets the handler refuse a valid message: an error frame, the socket open, counted toward the limit', async () => {
    const { session, peer } = sessionOf(
      async ({ messages, refuse }) => {
        for await (const _message of messages)
          refuse(new ValidationError([{ path: 'text', message: 'Not now' }]));
      },
      { invalidLimit: 2 },
    );
    session.received('{"text":"a"}', false);
    await settle();
    expect(peer.sent).toMatchObject([
      { type: 'error', problem: { code: 'VALIDATION_FAILED', detail: 'text: Not now' } },
    ]);
    expect(peer.closedWith).toBeUndefined();
    session.received('{"text":"b"}', false);
    await settle();
    expect(peer.closedWith).toEqual({ code: 1008, reason: '2 invalid messages' });
  });

  it('measures a message in bytes of UTF-8: three-byte characters count three times', () => {
    const { session, peer } = sessionOf(async () => new Promise(() => undefined), { maxMessageSize: 13 });
    // 12 characters, 13 bytes: at the limit.
    session.received('{"text":"é"}', false);
    expect(peer.sent).toEqual([]);
    // 13 characters, 17 bytes.
    session.received('{"text":"€€"}', false);
    expect(peer.sent).toMatchObject([{ problem: { status: 413, code: 'PAYLOAD_TOO_LARGE' } }]);
  });

  it('closes with 1008 once more messages wait than the handler takes, after its turn', async () => {
    const { session, peer } = sessionOf(async () => new Promise(() => undefined), { maxQueued: 2 });
    session.received('{"text":"1"}', false);
    session.received('{"text":"2"}', false);
    session.received('{"text":"3"}', false);
    // Frames of one read come in one turn: the handler has not had its own yet.
    expect(peer.closedWith).toBeUndefined();
    await vi.waitFor(
      () =>
        expect(peer.closedWith).toEqual({
          code: 1008,
          reason: 'messages arrive faster than they are handled',
        }),
      { timeout: 5000, interval: 5 },
    );
  });

  it('takes a burst of frames in one turn that the handler then takes, and bounds the burst', async () => {
    const taken: unknown[] = [];
    const { session, peer } = sessionOf(
      async ({ messages }) => {
        for await (const message of messages) taken.push(message);
      },
      { maxQueued: 2 },
    );
    await settle();
    for (let n = 0; n < 20; n++) session.received(`{"text":"${n}"}`, false);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(peer.closedWith).toBeUndefined();
    expect(taken).toHaveLength(20);
    // Sixteen times maxQueued in one turn is a flood, whoever takes it.
    for (let n = 0; n < 33; n++) session.received(`{"text":"${n}"}`, false);
    expect(peer.closedWith).toEqual({ code: 1008, reason: 'messages arrive faster than they are handled' });
  });

  it('closes with 4401 when the token that opened it expires, and when a check finds it revoked', async () => {
    const waitForever = async () => new Promise<void>(() => undefined);
    const soon = { timeout: 5000, interval: 10 };
    // An expiry past what one timer holds (about 24.8 days) is not taken as now.
    const distant = sessionOf(waitForever, {}, new OpenSockets(10), {
      expiresAt: Date.now() + 40 * 86_400_000,
    });
    const expiring = sessionOf(waitForever, {}, new OpenSockets(10), { expiresAt: Date.now() + 30 });
    expect(expiring.peer.closedWith).toBeUndefined();
    await vi.waitFor(
      () => expect(expiring.peer.closedWith).toEqual({ code: 4401, reason: 'the token expired' }),
      soon,
    );
    expect(distant.peer.closedWith).toBeUndefined();
    distant.session.ended();
    let holds = true;
    let checks = 0;
    const stillHold = async () => {
      checks++;
      return holds;
    };
    const revoked = sessionOf(waitForever, { credentialsCheck: 100 }, new OpenSockets(10), { stillHold });
    await vi.waitFor(() => expect(checks).toBeGreaterThanOrEqual(2), soon);
    expect(revoked.peer.closedWith).toBeUndefined();
    holds = false;
    await vi.waitFor(
      () => expect(revoked.peer.closedWith).toEqual({ code: 4401, reason: 'the token no longer holds' }),
      soon,
    );
    // Closed, it checks no more.
    const after = checks;
    revoked.session.ended();
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(checks).toBe(after);
    // A store that fails once is asked again; one that does not answer twice running: 1013, for
    // the client to come back when it does.
    let calls = 0;
    const blip = sessionOf(waitForever, { credentialsCheck: 100 }, new OpenSockets(10), {
      stillHold: () => (++calls === 1 ? Promise.reject(new Error('a blip')) : Promise.resolve(true)),
    });
    await vi.waitFor(() => expect(calls).toBeGreaterThanOrEqual(3), soon);
    expect(blip.peer.closedWith).toBeUndefined();
    blip.session.ended();
    const unknown = sessionOf(waitForever, { credentialsCheck: 100 }, new OpenSockets(10), {
      stillHold: () => Promise.reject(new Error('the store is down')),
    });
    await vi.waitFor(
      () =>
        expect(unknown.peer.closedWith).toEqual({
          code: 1013,
          reason: 'the credentials could not be checked',
        }),
      soon,
    );
  });

  it("closes with 4403 once the route's guards refuse the user its credentials now load, asking them only after a check that holds", async () => {
    const waitForever = async () => new Promise<void>(() => undefined);
    const soon = { timeout: 5000, interval: 10 };
    let allowed = true;
    let asked = 0;
    const stillAllowed = async () => {
      asked++;
      return allowed;
    };
    let holds = true;
    const demoted = sessionOf(
      waitForever,
      { credentialsCheck: 100 },
      new OpenSockets(10),
      { stillHold: async () => holds },
      stillAllowed,
    );
    await vi.waitFor(() => expect(asked).toBeGreaterThanOrEqual(2), soon);
    expect(demoted.peer.closedWith).toBeUndefined();
    allowed = false;
    await vi.waitFor(
      () =>
        expect(demoted.peer.closedWith).toEqual({
          code: 4403,
          reason: 'the route no longer allows this user',
        }),
      soon,
    );
    // A token that no longer holds is 4401 without asking the guards; a guard that throws is a
    // check that failed (tried once more, then 1013), not a refusal.
    holds = false;
    const before = asked;
    const lapsed = sessionOf(
      waitForever,
      { credentialsCheck: 100 },
      new OpenSockets(10),
      { stillHold: async () => holds },
      stillAllowed,
    );
    await vi.waitFor(
      () => expect(lapsed.peer.closedWith).toEqual({ code: 4401, reason: 'the token no longer holds' }),
      soon,
    );
    expect(asked).toBe(before);
    const broken = sessionOf(
      waitForever,
      { credentialsCheck: 100 },
      new OpenSockets(10),
      { stillHold: async () => true },
      () => Promise.reject(new Error('a guard with a bug')),
    );
    await vi.waitFor(
      () =>
        expect(broken.peer.closedWith).toEqual({
          code: 1013,
          reason: 'the credentials could not be checked',
        }),
      soon,
    );
  });

  it('holds send while the client holds more than the send buffer, and closes a handler that does not wait past four', async () => {
    let second: Promise<void> | undefined;
    const { session, peer } = sessionOf(
      async ({ send }) => {
        // The session is made before `peer` is known here: one turn later it is.
        await settle();
        peer.bufferedBytes = 2048;
        second = send('{"n":1}');
        // Still running: a handler that returned would close the socket and let its sends go.
        await new Promise(() => undefined);
      },
      { sendBuffer: 1024 },
    );
    await settle();
    await settle();
    let released = false;
    void second?.then(() => {
      released = true;
    });
    await settle();
    expect(released).toBe(false);
    peer.bufferedBytes = 512;
    session.drained();
    await settle();
    expect(released).toBe(true);
    const flooding = sessionOf(
      async ({ send }) => {
        await settle();
        flooding.peer.bufferedBytes = 4097;
        void send('{"n":2}');
      },
      { sendBuffer: 1024 },
    );
    await settle();
    await settle();
    expect(flooding.peer.closedWith).toEqual({ code: 1008, reason: 'the client does not read its messages' });
  });

  it('lets the process turn to its timers while a handler sends in a loop to a client that keeps up', async () => {
    let sent = 0;
    const { session, peer } = sessionOf(async ({ send, signal }) => {
      while (!signal.aborted) {
        await send('{"n":1}');
        sent++;
      }
    });
    // Buffered stays 0: only the session's own turns let this timer run.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent).toBeGreaterThan(64);
    expect(peer.closedWith).toBeUndefined();
    session.ended();
  });

  it('aborts the handler as the server closes, and a loop that ignores it still lets the process turn', async () => {
    let signal: AbortSignal | undefined;
    let testOver = false;
    const { session, shutDown } = sessionOf(async (channel) => {
      signal = channel.signal;
      while (!testOver) await channel.send('{"n":1}');
    });
    shutDown();
    expect(signal?.aborted).toBe(true);
    // Were sends after the close to resolve at once, this timer would never run.
    await new Promise((resolve) => setTimeout(resolve, 10));
    testOver = true;
    session.ended();
  });

  it('pings every interval and drops a client that answered nothing since the last ping', () => {
    vi.useFakeTimers();
    const { session, peer } = sessionOf(async () => new Promise(() => undefined), { pingInterval: 1000 });
    vi.advanceTimersByTime(1000);
    expect(peer.pings).toBe(1);
    session.pong();
    vi.advanceTimersByTime(1000);
    expect(peer.pings).toBe(2);
    expect(peer.terminated).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(peer.terminated).toBe(true);
  });

  it('ends with 1000 when the handler returns, with a problem frame and 1011 when a sent message fails, its reason unsaid', async () => {
    const returning = sessionOf(async () => undefined);
    await settle();
    expect(returning.peer.closedWith).toEqual({ code: 1000, reason: '' });
    const failing = sessionOf(async ({ fail }) => {
      fail(new Error('a secret of the server'));
    });
    await settle();
    expect(failing.peer.sent).toMatchObject([{ type: 'error', problem: { status: 500, code: 'INTERNAL' } }]);
    expect(JSON.stringify(failing.peer.sent)).not.toContain('secret');
    expect(failing.peer.closedWith?.code).toBe(1011);
  });

  it('closes with 1001 when the app shuts down, and counts each socket from its accepted handshake to its end', async () => {
    const sockets = new OpenSockets(1);
    let signal: AbortSignal | undefined;
    const { session, peer, shutDown } = sessionOf(
      async (channel) => {
        signal = channel.signal;
        return new Promise(() => undefined);
      },
      {},
      sockets,
    );
    expect(sockets.full).toBe(true);
    shutDown();
    expect(peer.closedWith).toEqual({ code: 1001, reason: 'the server is shutting down' });
    session.ended();
    expect(signal?.aborted).toBe(true);
    expect(sockets.open).toBe(0);
    // A session counts from its accepted handshake, before the runtime opens it, and its end
    // (a handshake that failed) gives its place back.
    const never = new SocketSession(
      {
        limits: socketDefaults,
        check: (message) => message,
        run: async () => undefined,
        credentials: undefined,
        stillAllowed: undefined,
      },
      {
        exposeErrors: false,
        log: silentLog,
        procedure: 'chat.joinRoom',
        sockets,
        client: 'address 127.0.0.1',
        onClosing: () => () => undefined,
      },
    );
    expect(sockets.open).toBe(1);
    never.ended();
    expect(sockets.open).toBe(0);
  });

  it('gives back the place of a handshake the runtime never completes, and refuses it if it opens late', () => {
    vi.useFakeTimers();
    try {
      const sockets = new OpenSockets(2, 2);
      const stalled = sockets.take('address 10.0.0.1');
      const late = sockets.take('address 10.0.0.1');
      expect(sockets.heldBy('address 10.0.0.1')).toBe(2);
      expect(sockets.full).toBe(true);
      vi.advanceTimersByTime(10_000);
      expect(sockets.heldBy('address 10.0.0.1')).toBe(0);
      expect(sockets.open).toBe(0);
      // Counted again, it would pass the caps unchecked: the session closes it instead.
      expect(late.opened()).toBe(false);
      expect(sockets.heldBy('address 10.0.0.1')).toBe(0);
      late.release();
      late.release();
      stalled.release();
      expect(sockets.open).toBe(0);
      expect(sockets.heldBy('address 10.0.0.1')).toBe(0);
      // An open socket keeps its place however long it lives.
      const open = sockets.take('user 1');
      expect(open.opened()).toBe(true);
      vi.advanceTimersByTime(60_000);
      expect(sockets.heldBy('user 1')).toBe(1);
      open.release();
      expect(sockets.open).toBe(0);
      // A session opened after its place was given back closes with 1013 and runs nothing.
      let ran = false;
      const lateSession = new SocketSession(
        {
          limits: socketDefaults,
          check: (message) => message,
          run: async () => {
            ran = true;
          },
          credentials: undefined,
          stillAllowed: undefined,
        },
        {
          exposeErrors: false,
          log: silentLog,
          procedure: 'chat.joinRoom',
          sockets,
          client: 'user 2',
          onClosing: () => () => undefined,
        },
      );
      vi.advanceTimersByTime(10_000);
      const peer = new RecordingPeer();
      lateSession.open(peer);
      expect(peer.closedWith).toEqual({ code: 1013, reason: 'the handshake took too long; open it again' });
      expect(ran).toBe(false);
      expect(sockets.open).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a handshake the runtime completed itself', () => {
  it('is counted as the 101 it was, while any other answer keeps its status', () => {
    expect(sentStatus(completedHandshake())).toBe(101);
    expect(sentStatus(new Response(null))).toBe(200);
    expect(sentStatus(new Response(null, { status: 426 }))).toBe(426);
  });
});

describe('the close line', () => {
  it('says who closed an open socket, how, after how long, and what went each way', async () => {
    const { session, lines } = sessionOf(async (channel) => {
      for await (const message of channel.messages) await channel.send(JSON.stringify({ echo: message }));
    });
    session.received('{"text":"a"}', false);
    session.received('{"text":"b"}', false);
    await settle();
    session.ended(1000);
    expect(lines).toEqual([
      {
        fields: {
          procedure: 'chat.joinRoom',
          closedBy: 'client',
          code: 1000,
          durationMs: expect.any(Number),
          received: 2,
          sent: 2,
        },
        message: 'socket closed',
      },
    ]);
  });

  it('names the server and its reason when the server closed it, and a lost connection as lost', async () => {
    const closedByServer = sessionOf(() => new Promise(() => undefined));
    closedByServer.shutDown();
    closedByServer.session.ended(1001);
    expect(closedByServer.lines[0]?.fields).toMatchObject({
      closedBy: 'server',
      code: 1001,
      reason: 'the server is shutting down',
    });
    const lost = sessionOf(() => new Promise(() => undefined));
    lost.session.ended();
    expect(lost.lines[0]?.fields).toMatchObject({ closedBy: 'lost', code: 1006 });
    // One line a socket, however many times its end is told.
    lost.session.ended(1000);
    expect(lost.lines).toHaveLength(1);
  });
});
