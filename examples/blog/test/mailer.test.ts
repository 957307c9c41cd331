/**
 * The development mailer writes each reset message through the request's own logger, so its line
 * carries the request's id; in production it only warns, naming the user by id, never by address.
 */

import { randomBytes } from 'node:crypto';
import type { App, RequestLog } from 'proceedjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBlogApp } from '../src/app.js';
import type { BlogContext } from '../src/context.js';
import { logMailer } from '../src/mailer.js';
import { inProcess } from './in-process.js';
import { eventually } from './support.js';

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  to?: string;
  token?: string;
}

describe('the development mailer', () => {
  const lines: string[] = [];
  let app: App<BlogContext>;

  beforeAll(async () => {
    app = await createBlogApp({
      databaseUrl: 'memory://',
      jwtSecret: randomBytes(32).toString('hex'),
      production: false,
      logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } },
    });
  });
  afterAll(() => app?.close());

  it('logs the reset token on the line of the request that asked for it', async () => {
    const email = `reader-${randomBytes(4).toString('hex')}@example.com`;
    const registered = await inProcess(app, {
      method: 'POST',
      url: '/api/auth/register',
      payload: { email, password: 'correct horse battery', name: 'Reader' },
    });
    expect(registered.statusCode).toBe(201);
    const asked = await inProcess(app, {
      method: 'POST',
      url: '/api/auth/forgot-password',
      payload: { email },
    });
    expect(asked.statusCode).toBe(202);
    const requestId = asked.headers['x-request-id'];
    expect(typeof requestId).toBe('string');
    const mailLine = () =>
      lines
        .map((line) => JSON.parse(line) as Line)
        .find((line) => line.msg.startsWith('Password reset requested') && line.to === email);
    await eventually(() => mailLine() !== undefined, 10_000, 'the reset mail in the log');
    expect(mailLine()).toMatchObject({ level: 30, reqId: requestId });
    expect(mailLine()?.token).toMatch(/\S{20,}/);
  });
});

describe('the mailer in production', () => {
  it('warns that nothing was sent, with the user’s id and neither the address nor the token', async () => {
    const written: { level: string; fields: object; message: string | undefined }[] = [];
    const at =
      (level: string) =>
      (fields: object | string, message?: string): void => {
        written.push(
          typeof fields === 'string' ? { level, fields: {}, message: fields } : { level, fields, message },
        );
      };
    const log: RequestLog = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    await logMailer({ production: true }).sendPasswordReset(
      {
        to: 'someone@example.com',
        name: 'Someone',
        userId: '0193c9a2-7d4e-7b1a-9f3e-2a6b1c5d8e90',
        token: 'secret-reset-token',
        expiresAt: new Date(),
      },
      log,
    );
    expect(written).toEqual([
      {
        level: 'warn',
        fields: { userId: '0193c9a2-7d4e-7b1a-9f3e-2a6b1c5d8e90' },
        message: 'Password reset requested, but no mailer is configured: nothing was sent',
      },
    ]);
    expect(JSON.stringify(written)).not.toMatch(/someone@example\.com|secret-reset-token/);
  });
});
