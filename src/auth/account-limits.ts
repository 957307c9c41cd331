/**
 * The account procedures' rate limits (docs/accounts.md, "Limits"): per client IP on every route
 * that takes what a person can guess or repeat, and per account where addresses do not bound an
 * attacker: failed passwords, whatever addresses they come from, and reset mails to one address.
 */
import { ProceedConfigError } from '../core/errors.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import { checkRateLimitRule, type RateLimitRule, rateLimit, type Step, step } from '../core/steps.js';

/** An email as the store keeps it, and as the limits per account count it. */
export const normalEmail = (address: string) => address.trim().toLowerCase();

/** Ten tries a minute per client IP on each sign-in route, named `auth`. */
export const accountRateLimit: RateLimitRule = Object.freeze({ name: 'auth', max: 10, window: 60_000 });

/**
 * Ten failed passwords per account in 15 minutes, named `failed-attempts`: at most 40 guesses an
 * hour at one account however many addresses send them (OWASP ASVS asks for at most 100).
 */
export const failedAttemptLimit: AccountLimit = Object.freeze({ max: 10, window: 15 * 60_000 });

/** Five reset mails per address an hour, named `reset-mails`: a form cannot flood an inbox. */
export const resetMailLimit: AccountLimit = Object.freeze({ max: 5, window: 60 * 60_000 });

/** A limit per account: `max` in `window` ms. */
export interface AccountLimit {
  readonly max: number;
  readonly window: number;
}

const accountLimitKeys = optionKeys<AccountLimit>()('max', 'window');

/** The rule of an account limit the app gave (or the default), or none for `false`. */
function ruleOf(
  setting: AccountLimit | false | undefined,
  fallback: AccountLimit,
  rule: { name: string; option: string },
): AccountLimit | undefined {
  if (setting === false) return undefined;
  if (setting === undefined) return fallback;
  refuseUnknownOptions(`accountProcedures ${rule.option}`, setting, accountLimitKeys, { required: true });
  try {
    return checkRateLimitRule({ name: rule.name, max: setting.max, window: setting.window });
  } catch (error) {
    throw new ProceedConfigError(`accountProcedures ${rule.option}: ${(error as Error).message}`);
  }
}

/** The steps of the account procedures' limits, built once per `accountProcedures()`. */
export interface AccountLimitSteps {
  /** Per client IP: register, login, refresh, password change, forgot-password. */
  readonly perAddress: Step<unknown>;
  /** Failed logins per email. */
  readonly loginFailures: Step<unknown>;
  /** Failed password changes per user. */
  readonly changeFailures: Step<unknown>;
  /** Reset mails per email. */
  readonly resetMails: Step<unknown>;
}

/** What a limit turned off leaves: a step that adds nothing to its route. */
const unlimited = (name: string) => step({ name: `${name} (off)` });

export function accountLimitSteps(options: {
  rateLimit: RateLimitRule | undefined;
  failedAttempts: AccountLimit | false | undefined;
  mailLimit: AccountLimit | false | undefined;
}): AccountLimitSteps {
  const failures = ruleOf(options.failedAttempts, failedAttemptLimit, {
    name: 'failed-attempts',
    option: 'failedAttempts',
  });
  const mails = ruleOf(options.mailLimit, resetMailLimit, {
    name: 'reset-mails',
    option: 'passwordReset.mailLimit',
  });
  const byEmail = ({ input }: { input: { email: string } }) => normalEmail(input.email);
  return {
    perAddress: rateLimit(checkRateLimitRule(options.rateLimit ?? accountRateLimit)),
    loginFailures:
      failures === undefined
        ? unlimited('failed-attempts')
        : rateLimit({ name: 'failed-attempts', ...failures, key: byEmail, counts: 'failures' }),
    changeFailures:
      failures === undefined
        ? unlimited('failed-attempts')
        : rateLimit<{ auth?: { claims: { sub: string } } }>({
            name: 'failed-attempts',
            ...failures,
            key: ({ ctx }) => ctx.auth?.claims.sub,
            counts: 'failures',
          }),
    resetMails:
      mails === undefined
        ? unlimited('reset-mails')
        : rateLimit({ name: 'reset-mails', ...mails, key: byEmail }),
  };
}
