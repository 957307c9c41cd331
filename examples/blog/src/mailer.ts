import type { RequestLog } from 'proceedjs';

/** A password-reset message: whom it goes to, and the token its link carries. */
export interface ResetMail {
  to: string;
  name: string;
  userId: string;
  token: string;
  expiresAt: Date;
}

/** Where password-reset links go. Development logs them; production plugs in a real mailer. */
export interface Mailer {
  /** `log` is the request's logger (`ctx.request.log`): each line it writes carries the request's id. */
  sendPasswordReset(message: ResetMail, log: RequestLog): Promise<void>;
}

/**
 * Writes reset tokens to the log, for development and tests. In production a token in a log
 * would be a credential for anyone who can read the log, so there it only warns that no mailer
 * is configured, naming the user by id: an address in a log is personal data kept wherever the
 * logs go.
 */
export function logMailer(options: { production: boolean }): Mailer {
  return {
    async sendPasswordReset({ to, name, userId, token, expiresAt }, log) {
      if (options.production) {
        log.warn({ userId }, 'Password reset requested, but no mailer is configured: nothing was sent');
        return;
      }
      log.info(
        { to, name, token, expiresAt },
        'Password reset requested (development mailer: the token is logged)',
      );
    },
  };
}
