/**
 * A route's guards, run in order before its input is read (docs/auth.md, "Guards").
 */
import type { Call, CompileOptions } from './call.js';
import { ProceedError, UnauthenticatedError } from './errors.js';
import { canForbid, type Guard, MissingUserFieldError, missingUserField } from './guards.js';
import { isThenable } from './thenable.js';
import type { StepTracer } from './tracing.js';

/**
 * A guard declared the user fields it reads; a user without one is the loader's mistake, not the
 * caller's: an internal error (500) whose message, in the log, says which guard, field and loader.
 */
function loaderMistake(error: MissingUserFieldError, owner: string, options: CompileOptions): Error {
  const source = options.userSource?.() ?? "the app's context";
  return new Error(
    `Guard "${error.guard}" of ${owner} reads user.${error.field}, but the user from ${source} has no "${error.field}": return it from the loader (docs/auth.md, "What guards need from the app")`,
  );
}

/**
 * Runs the guards in order: synchronously while they answer synchronously, so that a route
 * whose guards read only the context makes no promise; from the first pending one on, in turn.
 */
export function runGuards(
  guards: readonly Guard<never>[],
  ctx: Call['ctx'],
  owner: string,
  options: CompileOptions,
  tracer: StepTracer | undefined,
  from = 0,
): void | Promise<void> {
  try {
    for (let index = from; index < guards.length; index++) {
      const guard = guards[index] as Guard<never>;
      const signedIn = ctx.user !== undefined && ctx.user !== null;
      if (guard.requiresUser === true && !signedIn) throw new UnauthenticatedError();
      const missing = signedIn ? missingUserField(guard, ctx.user) : undefined;
      if (missing !== undefined) throw new MissingUserFieldError(guard.name, missing);
      const checked =
        tracer === undefined
          ? guard.check(ctx as never)
          : tracer.step('guard', guard.name, () => guard.check(ctx as never));
      // Any thenable is awaited, a native promise or not: a check still pending is no pass.
      if (isThenable(checked))
        return Promise.resolve(checked).then((allowed) => {
          refuseUnless(allowed, guard, signedIn);
          return runGuards(guards, ctx, owner, options, tracer, index + 1);
        }, rethrow);
      refuseUnless(checked, guard, signedIn);
    }
  } catch (error) {
    rethrow(error);
  }
  function rethrow(error: unknown): never {
    throw error instanceof MissingUserFieldError ? loaderMistake(error, owner, options) : error;
  }
}

/**
 * For what outlives its request (a WebSocket, an event stream) once its credentials are checked
 * again and hold: whether the route's guards still let the caller in, asked about `ctx.user` as
 * the check loaded it (a demoted admin leaves an admin's socket). A guard's refusal (a 4xx: 403,
 * or the 404 of a room gone) is false; a 429 or a 5xx (a 503 of a service down), which pass, or a
 * bug rejects: a check that failed, tried again before what it guards ends. Undefined when there
 * is nothing to ask again: no guards, or credentials that are never checked again.
 */
export function guardsStillAllow(
  guards: readonly Guard<never>[],
  ctx: Call['ctx'],
  owner: string,
  options: CompileOptions,
  checkedAgain: boolean,
): (() => Promise<boolean>) | undefined {
  if (!checkedAgain || guards.length === 0) return undefined;
  return () =>
    Promise.resolve()
      .then(() => runGuards(guards, ctx, owner, options, undefined))
      .then(
        () => true,
        (error: unknown) => {
          if (error instanceof ProceedError && error.status < 500 && error.status !== 429) return false;
          throw error;
        },
      );
}

/** Only `true` passes: anything else a check returns, by mistake or not, refuses. */
function refuseUnless(allowed: unknown, guard: Guard<never>, signedIn: boolean): void {
  if (allowed === true) return;
  if (!signedIn || !canForbid(guard)) throw new UnauthenticatedError();
  throw new ProceedError('FORBIDDEN', `Guard "${guard.name}" denied access`);
}
