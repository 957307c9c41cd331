import { describe, expect, it } from 'vitest';
import { hostRefusal, isAcceptedHost } from './url.js';

describe('the Host a request names', () => {
  it('is accepted as a URL can hold it, whichever of a few names comes', () => {
    // A probe at the pod's address beside the public name: each checked once, then remembered.
    for (let round = 0; round < 3; round++)
      for (const host of [
        'api.example.com',
        '10.1.2.3:3030',
        'LOCALHOST',
        'api.example.com.',
        '[::1]:3030',
        '',
      ])
        expect(hostRefusal(host)).toBeUndefined();
    expect(hostRefusal(null)).toBeUndefined();
  });

  it('is refused when no URL can hold it, or when two lines were joined (a comma parses as a name)', () => {
    for (const host of ['a b', 'x/api/notes?', 'x@y', 'a:99999', '[fe80::1%25eth0]:3030'])
      expect(hostRefusal(host)?.message).toMatch(/^The Host header names no host a URL can hold/);
    for (const host of ['x, y', 'x,y']) {
      expect(isAcceptedHost(host)).toBe(false);
      expect(hostRefusal(host)?.message).toBe('A request names one host: it sent two Host headers');
    }
  });
});
