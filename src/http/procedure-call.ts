/**
 * A procedure's compiled call with the rules every adapter applies around it, in one place
 * (docs/architecture.md, "One home per HTTP rule"): which requests an `Idempotency-Key` sends
 * through the store, and the entity tag of a read with its `If-Match` check. Adapters only read
 * the request before and write the answer after.
 */

import type { Call, KeyedLimiter, Reply } from '../core/call.js';
import { ProceedError } from '../core/errors.js';
import { compileRoute } from '../core/execute.js';
import {
  type IdempotencySettings,
  idempotencyKeyOf,
  keyNotTaken,
  replaysByKey,
  runIdempotent,
} from '../core/idempotency.js';
import { staleVersion } from '../core/precondition.js';
import type { MountedRoute } from '../core/route-table.js';
import { runGuards } from '../core/run-guards.js';

/** The app's idempotency store and whether every `create*` replays, once a plugin set them. */
export interface IdempotencyRuntime {
  readonly settings: IdempotencySettings;
  readonly creates: boolean;
}

/** A reply, and whether it was replayed for an `Idempotency-Key`. */
export type Answered = Reply & { replayed?: true };

export interface ProcedureCallOptions {
  userSource: () => string | undefined;
  entityTags: boolean;
  idempotency: () => IdempotencyRuntime | undefined;
  entityTag: (body: string, version?: string) => string;
  ifMatchHolds: (ifMatch: string, tag: string) => boolean;
  /** The app's rate limits, for the route's rules counted per key (src/http/rate-limit.ts). */
  rateLimits: { keyedLimiterFor(route: MountedRoute): KeyedLimiter | undefined };
}

export interface ProcedureCall {
  /**
   * Runs the call, through the idempotency store when a POST sent a key; synchronous when the
   * call is. Two keys (a repeated header, joined with ", ") are one malformed key.
   */
  run(call: Call, sentKey: string | string[] | undefined): Answered | Promise<Answered>;
  /** The answer's entity tag, on a 200 to a GET that carries one; 412 for a stale `If-Match`. */
  tagOf(result: Reply, ifMatch: string | undefined): string | undefined;
  /** The tag a write's answer carries: its record's version's, when the handler gave one. */
  writtenTagOf(result: Reply): string | undefined;
}

/** A write with another site's cookies (docs/procedures.md, "Cross-site requests"). */
export const crossSiteRequest = (reason: string) =>
  new ProceedError('FORBIDDEN', `Cross-site request refused: ${reason}`);

export function procedureCall(route: MountedRoute, options: ProcedureCallOptions): ProcedureCall {
  const invoke = compileRoute(route, {
    userSource: options.userSource,
    keyedLimiter: options.rateLimits.keyedLimiterFor(route),
  });
  const owner = `${route.collection}.${route.name}`;
  const mayReplay = (call: Call) =>
    runGuards(route.definition.guards, call.ctx, owner, { userSource: options.userSource }, call.trace);
  const isPost = route.method === 'POST';
  const isRead = route.method === 'GET';
  // Versioned answers keep their tag whatever `entityTags` says: If-Match needs it.
  const tagged = isRead && (options.entityTags || route.definition.versioning !== undefined);
  const { entityTag, ifMatchHolds } = options;
  /**
   * Where a key sent to this route goes: nowhere on an app without a key store (clients that add
   * the header to every POST keep working); on one with a store, a POST that does not replay
   * refuses it, since the client would believe a retry safe.
   */
  const keyStore = (): IdempotencySettings | undefined => {
    const runtime = options.idempotency();
    if (runtime === undefined) return undefined;
    if (!replaysByKey(route, runtime.creates)) throw keyNotTaken();
    return runtime.settings;
  };
  return {
    run(call, sentKey) {
      const sent = isPost ? sentKey : undefined;
      const store = sent === undefined ? undefined : keyStore();
      if (store === undefined || sent === undefined) return invoke(call);
      const key = Array.isArray(sent) ? sent.join(', ') : sent;
      return runIdempotent(store, call, idempotencyKeyOf(key), invoke, mayReplay);
    },
    tagOf(result, ifMatch) {
      // A file carries a tag of its own (src/http/files.ts).
      if (!tagged || result.status !== 200 || result.file !== undefined || result.events !== undefined)
        return undefined;
      const tag = entityTag(result.body, result.version);
      // A stale If-Match on a read is a 412 that must not carry the route's success headers.
      if (ifMatch !== undefined && !ifMatchHolds(ifMatch, tag)) throw staleVersion();
      return tag;
    },
    writtenTagOf(result) {
      return isRead || result.version === undefined ? undefined : entityTag(result.body, result.version);
    },
  };
}
