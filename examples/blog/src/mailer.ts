/** Where password-reset links go. Development logs them; production plugs in a real mailer. */
export interface Mailer {
  sendPasswordReset(message: { to: string; name: string; token: string; expiresAt: Date }): Promise<void>;
}

interface Log {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/**
 * Writes reset tokens to the log, for development and tests. In production a token in a log
 * would be a credential for anyone who can read the log, so there it only warns that no mailer
 * is configured.
 */
export function logMailer(log: Log, options: { production: boolean }): Mailer {
  return {
    async sendPasswordReset({ to, name, token, expiresAt }) {
      if (options.production) {
        log.warn({ to }, 'Password reset requested, but no mailer is configured: nothing was sent');
        return;
      }
      log.info(
        { to, name, token, expiresAt },
        'Password reset requested (development mailer: the token is logged)',
      );
    },
  };
}
