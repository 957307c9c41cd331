import { describe, expect, it } from 'vitest';
import { lingeringBytes, lingersOn } from './lingering.js';

describe('the lingering rule', () => {
  it('reads on at least 10 MiB, or the route’s own limit when more', () => {
    expect(lingeringBytes(1024)).toBe(10 * 1024 * 1024);
    expect(lingeringBytes(50 * 1024 * 1024)).toBe(50 * 1024 * 1024);
  });

  it('reads on a body of unknown length or one declared within the bound, never one declared past it', () => {
    const sent = (headers: Record<string, string>, awaitsContinue?: boolean) => ({
      headers: new Headers(headers),
      ...(awaitsContinue === undefined ? {} : { awaitsContinue }),
    });
    expect(lingersOn(sent({}), 100)).toBe(true);
    expect(lingersOn(sent({ 'content-length': '100' }), 100)).toBe(true);
    expect(lingersOn(sent({ 'content-length': '101' }), 100)).toBe(false);
    expect(lingersOn(sent({ 'content-length': 'lots' }), 100)).toBe(false);
    // Not sent yet: its client waits for a 100 Continue that a refusal does not send.
    expect(lingersOn(sent({ 'content-length': '100' }, true), 100)).toBe(false);
    expect(lingersOn(sent({ 'content-length': '100' }, false), 100)).toBe(true);
  });
});
