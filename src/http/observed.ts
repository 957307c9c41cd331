/**
 * What observers of an app learn of each answer (`app.observe`; the metrics plugin counts with
 * it), the same from every adapter.
 */

/** A route as observers see it: the same object for every answer of that route. */
export interface ObservedRoute {
  /** `collection.name`, on the routes of procedures. */
  readonly procedure: string | undefined;
  /** The route's path template (`/api/posts/:id`). */
  readonly path: string;
}

/** One answer the app sent. */
export interface Answer {
  /** Undefined when no route matched (a 404 or 405 of the app). */
  readonly route: ObservedRoute | undefined;
  readonly method: string;
  readonly status: number;
  /** The problem code of a problem+json answer; undefined for a success. */
  readonly problem: string | undefined;
  /** From the request's arrival to the answer, in seconds. */
  readonly seconds: number;
}
