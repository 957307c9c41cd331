import { describe, expect, it } from 'vitest';
import { redactedError, withoutQueryParameters } from './redaction.js';

describe('withoutQueryParameters', () => {
  it('cuts a failed query’s parameters to the end, line breaks inside them included, and keeps a stack’s frames', () => {
    const message =
      'Failed query: update users set name = $1, password_hash = $2\nparams: 12 Main St\nSpringfield,scrypt$16384$8$1$salt$hash';
    expect(withoutQueryParameters(message)).toBe(
      'Failed query: update users set name = $1, password_hash = $2\nparams: [redacted]',
    );
    const stack = `Error: ${message}\n    at query (db.js:1:1)\n    at handler (app.js:2:2)`;
    expect(withoutQueryParameters(stack)).toBe(
      'Error: Failed query: update users set name = $1, password_hash = $2\nparams: [redacted]\n    at query (db.js:1:1)\n    at handler (app.js:2:2)',
    );
    expect(withoutQueryParameters('No parameters here')).toBe('No parameters here');
  });

  it('leaves an error its type, message, stack and code, redacted, and nothing else', () => {
    const error = Object.assign(new Error('Failed query: select\nparams: secret'), {
      code: '23505',
      detail: 'Key (email)=(ada@example.com) already exists.',
    });
    const redacted = redactedError(error);
    expect(redacted).toMatchObject({
      name: 'Error',
      message: 'Failed query: select\nparams: [redacted]',
      code: '23505',
    });
    expect(JSON.stringify(redacted)).not.toMatch(/secret|ada@/);
    expect(redactedError('thrown text\nparams: x')).toBe('thrown text\nparams: [redacted]');
  });
});
