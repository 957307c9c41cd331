/** What every call's context starts from: the request as the core sees it. Transport-neutral. */
/** What Proceed knows of the HTTP request behind a call. Transport-neutral. */
export interface RequestInfo {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly ip: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Raw path parameters, before coercion and validation. */
  readonly params: Readonly<Record<string, string>>;
}

/** The context every handler, guard and middleware receives. Apps and plugins extend it. */
export interface BaseContext {
  request: RequestInfo;
}
