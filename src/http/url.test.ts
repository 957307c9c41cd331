import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostRefusal, isAcceptedHost, loggedUrl } from './url.js';

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

describe('a URL as logs write it', () => {
  it('redacts an access_token however its name is spelt, as the handshake reads it', () => {
    expect(loggedUrl('/api/rooms/socket?access_token=sekrit&q=1')).toBe(
      '/api/rooms/socket?access_token=[redacted]&q=1',
    );
    // URLSearchParams reads these names as access_token: so does the auth plugin's handshake.
    expect(loggedUrl('/api/rooms/socket?access%5Ftoken=sekrit')).toBe(
      '/api/rooms/socket?access%5Ftoken=[redacted]',
    );
    expect(loggedUrl('/s?q=%20&%61ccess_token=sekrit&x=1')).toBe('/s?q=%20&%61ccess_token=[redacted]&x=1');
    expect(loggedUrl('/s?a=1&access_token=one&access_token=two')).toBe(
      '/s?a=1&access_token=[redacted]&access_token=[redacted]',
    );
    // A `#` (Node's request URL keeps one) and a doubled `?`: the handshake still reads the token.
    expect(loggedUrl('/s?x=1#&access_token=sekrit')).toBe('/s?x=1#&access_token=[redacted]');
    expect(loggedUrl('/s??access_token=sekrit')).toBe('/s??access_token=[redacted]');
    for (const url of ['/s?x=1#&access_token=sekrit', '/s??access_token=sekrit'])
      expect(new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('access_token')).toBe('sekrit');
    for (const url of ['/s?access%5Ftoken=sekrit', '/s?x=1&%61%63%63%65%73%73%5F%74%6F%6B%65%6E=sekrit'])
      expect(new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('access_token')).toBe('sekrit');
  });

  it('redacts a password, a key, a secret or a signature a client put in a query, and nothing else', () => {
    expect(
      loggedUrl('/api/x?password=hunter2&q=1&api_key=k1&apiKey=k2&client_secret=s&X-Amz-Signature=sig'),
    ).toBe(
      '/api/x?password=[redacted]&q=1&api_key=[redacted]&apiKey=[redacted]&client_secret=[redacted]&X-Amz-Signature=[redacted]',
    );
    expect(loggedUrl('/api/x?PassWord=a&refresh_token=b')).toBe(
      '/api/x?PassWord=[redacted]&refresh_token=[redacted]',
    );
    expect(loggedUrl('/api/posts?limit=20&cursor=abc&q=pass')).toBe('/api/posts?limit=20&cursor=abc&q=pass');
    expect(loggedUrl('/s?my_access_token=1')).toBe('/s?my_access_token=[redacted]');
    expect(loggedUrl('/blob?sv=2024&sig=abc%2Bdef&key=k&keyword=x&monkey=y')).toBe(
      '/blob?sv=2024&sig=[redacted]&key=[redacted]&keyword=x&monkey=y',
    );
  });

  it('never writes a token the handshake would read, on any query made of the pieces that spell one', () => {
    const piece = fc.constantFrom(
      'access_token',
      'access%5Ftoken',
      '%61ccess_token',
      '=',
      '&',
      '?',
      '#',
      '%',
      '+',
      'x',
      '1',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const url = `/s?${pieces.join('')}SECRET`;
        const read = new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('access_token');
        if (read?.includes('SECRET')) expect(loggedUrl(url)).not.toContain('SECRET');
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves every other URL as it is, malformed escapes included', () => {
    for (const url of ['/api/posts', '/api/posts?q=%zz&access=1', '/s?q=a%20b', '/s?%=1'])
      expect(loggedUrl(url)).toBe(url);
  });
});
