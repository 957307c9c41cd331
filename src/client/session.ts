/**
 * A signed-in session for the typed client (docs/client.md, "Refreshing the access token"): the
 * token every call sends, and a `fetch` that, when a call is refused for an expired or revoked
 * access token, trades the refresh token for a new pair once and sends the call again. One
 * refresh at a time, whatever the number of calls refused at once: a refresh token works once,
 * and the server ends the whole login when one is used twice (docs/auth.md).
 */
import { ProblemError } from './errors.js';

/** What a login, a registration and a refresh answer, with whatever else the app puts beside the pair. */
export interface SessionTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
}

export interface RefreshingSessionOptions<S extends SessionTokens> {
  /** The session to start with: what the login answered, or one kept from before. None: signed out. */
  session?: S | undefined;
  /**
   * Trades a refresh token for a new session, through a client that sends no token (the refresh
   * route refuses an expired bearer token like any other): `(refreshToken) =>
   * anonymous.auth.refresh({ refreshToken })`.
   */
  refresh: (refreshToken: string) => Promise<S>;
  /** Told of each new session (keep it, in storage say) and of `undefined` once a refresh is refused. */
  onChange?: (session: S | undefined) => void;
  /** The `fetch` to send with: the global one by default. */
  fetch?: typeof fetch;
}

export interface RefreshingSession<S extends SessionTokens> {
  /** For `createClient({ token })`: the current access token, none when signed out. */
  readonly token: () => string | undefined;
  /** For `createClient({ fetch })`: refreshes and sends again a call refused for its token. */
  readonly fetch: typeof fetch;
  /** The session now, `undefined` when signed out. */
  readonly current: S | undefined;
  /** Starts a session (after a login) or ends it (`undefined`, after a logout). */
  set(session: S | undefined): void;
}

/** The statuses of a refused refresh that end the session; any other failure is the call's to report. */
const signedOut = new Set([400, 401, 403]);

/**
 * A session whose access token is refreshed when a call is refused for it (401 `INVALID_TOKEN`).
 * The refresh runs once for every call refused with the same token; a call refused after another
 * has refreshed sends the new token without a refresh of its own. A refused refresh (the refresh
 * token expired, used or revoked, the user deactivated) ends the session: `onChange(undefined)`,
 * and the call rejects with its 401. A call whose body cannot be sent twice (a stream) is not
 * sent again; its 401 stands, as does any call given a `Request` rather than a URL.
 */
export function refreshingSession<S extends SessionTokens>(
  options: RefreshingSessionOptions<S>,
): RefreshingSession<S> {
  if (typeof options.refresh !== 'function')
    throw new TypeError('refreshingSession needs refresh: (refreshToken) => the new session');
  const send = options.fetch ?? globalThis.fetch;
  if (typeof send !== 'function')
    throw new TypeError('refreshingSession found no fetch: pass fetch, or run where one is global');
  let current = options.session;
  let refreshing: Promise<S | undefined> | undefined;

  const set = (session: S | undefined) => {
    current = session;
    options.onChange?.(session);
  };

  /** The session after the one whose access token `refused` was: refreshed once, by whichever call asks first. */
  const renewedAfter = (refused: string): Promise<S | undefined> => {
    const from = current;
    if (from === undefined) return Promise.resolve(undefined);
    // Refreshed meanwhile, or signed in again: the call goes again with the token there is now.
    if (from.accessToken !== refused) return Promise.resolve(from);
    refreshing ??= options
      .refresh(from.refreshToken)
      .then(
        (next) => {
          // A login or logout while the refresh ran decides the session; the refresh does not undo it.
          if (current === from) set(next);
          return current;
        },
        (error: unknown) => {
          if (!(error instanceof ProblemError) || !signedOut.has(error.status)) throw error;
          if (current === from) set(undefined);
          return current;
        },
      )
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  };

  const refreshingFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    // The typed client sends a URL and its init; a Request of someone else's is sent as it is.
    if (input instanceof Request) return send(input, init);
    const headers = new Headers(init?.headers);
    const sent = bearerOf(headers);
    const answer = await send(input, init);
    if (sent === undefined || !canSendAgain(init?.body) || !(await refusesToken(answer))) return answer;
    const renewed = await renewedAfter(sent);
    if (renewed === undefined) return answer;
    headers.set('authorization', `Bearer ${renewed.accessToken}`);
    // The refused answer is not read: its connection is free for the next request.
    await answer.body?.cancel().catch(() => undefined);
    return send(input, { ...init, headers });
  };

  return {
    token: () => current?.accessToken,
    fetch: refreshingFetch as typeof fetch,
    get current() {
      return current;
    },
    set,
  };
}

function bearerOf(headers: Headers): string | undefined {
  const match = /^Bearer +(\S+)$/i.exec(headers.get('authorization') ?? '');
  return match?.[1];
}

/** A 401 whose problem says the bearer token was refused (expired, revoked, malformed). */
async function refusesToken(answer: Response): Promise<boolean> {
  if (answer.status !== 401) return false;
  try {
    const problem = (await answer.clone().json()) as { code?: unknown };
    return problem.code === 'INVALID_TOKEN';
  } catch {
    return false;
  }
}

/** Whether a request body can be sent a second time: none, text, bytes or a form, not a stream. */
function canSendAgain(body: BodyInit | null | undefined): boolean {
  return body === undefined || body === null || !(body instanceof ReadableStream);
}
