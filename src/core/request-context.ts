/** What every call's context starts from: the request as the core sees it. Transport-neutral. */
/** What Proceed knows of the HTTP request behind a call. Transport-neutral. */
export interface RequestInfo {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly ip: string;
  /** Every header by lower-case name (made when first read on a Fetch runtime). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** One header by lower-case name, a repeated one joined with ", ": what to read for one or two. */
  header(name: string): string | undefined;
  /** Raw path parameters, before coercion and validation. */
  readonly params: Readonly<Record<string, string>>;
  /**
   * True for a WebSocket handshake (a GET asking for `Upgrade: websocket`) to a socket procedure's
   * route: the one request that may carry its bearer token in the query string, as a browser's
   * `WebSocket` sets no header (docs/sockets.md, "Authentication").
   */
  readonly opensSocket?: boolean;
  /**
   * True for a GET to an event stream's route: an answer that lives on after the request, whose
   * credentials are kept (`holdCredentials`) as a socket's are, so that the per-client limit
   * counts it by its user (docs/events.md, "Limits").
   */
  readonly opensStream?: boolean;
  /**
   * A cookie the request carried. With `{ signed: true }`, only when one of the app's cookie
   * secrets signed it: undefined for a forged, altered or unsigned one (docs/procedures.md,
   * "Headers and cookies per request").
   */
  cookie(name: string, options?: { signed?: boolean }): string | undefined;
  /**
   * The app's logger for this request: each line carries its `reqId` (the `X-Request-Id` of the
   * answer) and, in a traced request, its `trace_id`, as the request's own line does
   * (docs/deployment.md, "Logs"). Made the first time it is read.
   */
  readonly log: RequestLog;
}

/** A logger's methods, as pino's: an object of fields and a message, or a message alone. */
type LogMethod = (fieldsOrMessage: object | string, message?: string) => void;

/** What `ctx.request.log` offers: pino's levels, each line tied to its request. */
export interface RequestLog {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
}

/** The context every handler, guard and middleware receives. Apps and plugins extend it. */
export interface BaseContext {
  request: RequestInfo;
}
