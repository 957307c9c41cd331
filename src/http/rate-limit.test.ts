import { describe, expect, it } from 'vitest';
import type { MountedRoute } from '../core/route-table.js';
import { ProxyTrust, peerAddressOf } from './client-address.js';
import { clientKey, RateLimits } from './rate-limit.js';
import { bun } from './runtimes/bun.js';
import { deno } from './runtimes/deno.js';
import { node } from './runtimes/node.js';
import { workers } from './runtimes/workers.js';

describe('clientKey', () => {
  it('keeps IPv4, reads an IPv4-mapped IPv6 address as its IPv4, and groups IPv6 by /64', () => {
    expect(clientKey('10.0.0.1')).toBe('10.0.0.1');
    expect(clientKey('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe(clientKey('2001:db8:1:2:ffff::1'));
    expect(clientKey('2001:db8:1:2::1')).not.toBe(clientKey('2001:db8:1:3::1'));
    // Junk (a trusted proxy passing on what a client wrote) shares one key: it cannot grow the map.
    expect(clientKey('not an address:')).toBe('unknown');
    expect(clientKey('x'.repeat(16_000))).toBe('unknown');
    expect(clientKey('999.1.1.1')).toBe('unknown');
    expect(clientKey('')).toBe('unknown');
    expect(clientKey(undefined)).toBe('unknown');
  });
});

describe('the client address on a Fetch runtime', () => {
  const request = new Request('http://api.example/');
  it('comes from { ip } or the runtime’s own argument (Bun’s server, Deno’s handler info, @hono/node-server), else is empty', () => {
    expect(peerAddressOf(request, { ip: '10.0.0.3' })).toBe('10.0.0.3');
    expect(peerAddressOf(request, { incoming: { socket: { remoteAddress: '10.0.0.4' } } })).toBe('10.0.0.4');
    expect(peerAddressOf(request, undefined)).toBe('');
    expect(bun.peerAddress(request, { requestIP: () => ({ address: '10.0.0.1' }) })).toBe('10.0.0.1');
    expect(deno.peerAddress(request, { remoteAddr: { hostname: '10.0.0.2' } })).toBe('10.0.0.2');
    // Each runtime reads its own argument only.
    expect(node.peerAddress(request, { remoteAddr: { hostname: '10.0.0.2' } })).toBeUndefined();
    const fromEdge = new Request('http://api.example/', { headers: { 'cf-connecting-ip': '1.1.1.1' } });
    expect(workers.peerAddress(fromEdge, undefined)).toBe('1.1.1.1');
    // Outside Workers a client could send this header itself: it is not read.
    expect(peerAddressOf(fromEdge, {})).toBe('');
  });

  it('reads X-Forwarded-For only from trusted proxies', () => {
    expect(new ProxyTrust(false).clientAddress('127.0.0.1', '203.0.113.7')).toBe('127.0.0.1');
    expect(new ProxyTrust(true).clientAddress('127.0.0.1', '203.0.113.7, 10.0.0.9')).toBe('203.0.113.7');
    const loopback = new ProxyTrust('loopback');
    expect(loopback.clientAddress('127.0.0.1', '203.0.113.7')).toBe('203.0.113.7');
    expect(loopback.clientAddress('198.51.100.1', '203.0.113.7')).toBe('198.51.100.1');
    expect(new ProxyTrust(['10.0.0.0/8']).clientAddress('10.1.2.3', '203.0.113.7, 10.0.0.9')).toBe(
      '203.0.113.7',
    );
    expect(loopback.clientAddress('127.0.0.1', null)).toBe('127.0.0.1');
  });

  it('takes the peer where a trusted hop passed on no address: junk names no client, in the log or the limits', () => {
    const oneHop = new ProxyTrust(1);
    for (const junk of ['<script>', 'foo1', 'A'.repeat(3000), '1.2.3.4.5', '::g', '300.1.1.1'])
      expect(oneHop.clientAddress('10.0.0.1', `${junk}, 203.0.113.7`)).toBe('203.0.113.7');
    for (const junk of ['<script>', 'foo1', 'A'.repeat(3000), '1.2.3.4.5', '::g', '300.1.1.1'])
      expect(oneHop.clientAddress('10.0.0.1', junk)).toBe('10.0.0.1');
    expect(oneHop.clientAddress('10.0.0.1', '2001:db8::7')).toBe('2001:db8::7');
    expect(oneHop.clientAddress('10.0.0.1', '::ffff:203.0.113.7')).toBe('::ffff:203.0.113.7');
    expect(new ProxyTrust(true).clientAddress('10.0.0.1', 'x, <b>')).toBe('10.0.0.1');
  });

  it('reads the address a proxy wrote with its port as the address alone: one client, one key', () => {
    const trusted = new ProxyTrust('10.0.0.1');
    expect(trusted.clientAddress('10.0.0.1', '203.0.113.9:1000')).toBe('203.0.113.9');
    expect(trusted.clientAddress('10.0.0.1', '203.0.113.9:1001')).toBe('203.0.113.9');
    expect(trusted.clientAddress('10.0.0.1', '[2001:db8::1]:443')).toBe('2001:db8::1');
    expect(trusted.clientAddress('10.0.0.1', '[2001:db8::1]')).toBe('2001:db8::1');
    expect(trusted.clientAddress('10.0.0.1', '2001:db8::1')).toBe('2001:db8::1');
    // A trusted proxy written with its port is walked past, to the client before it.
    const chain = new ProxyTrust(['10.0.0.0/8']);
    expect(chain.clientAddress('10.0.0.2', '198.51.100.7, 10.0.0.5:5555')).toBe('198.51.100.7');
    expect(chain.clientAddress('10.0.0.2', '203.0.113.1:80, 10.0.0.5:6666')).toBe('203.0.113.1');
    // Two clients behind the proxy keep two keys (with the port, both were "unknown").
    expect(clientKey(trusted.clientAddress('10.0.0.1', '198.51.100.7:2000'))).not.toBe(
      clientKey(trusted.clientAddress('10.0.0.1', '203.0.113.9:1000')),
    );
  });

  it('takes the origin the client named from a trusted proxy alone, as Fastify reads it', () => {
    const url = new URL('http://10.0.0.5:3030/api/notes');
    const forwarded = new Headers({
      'x-forwarded-proto': 'http, HTTPS',
      'x-forwarded-host': 'a, Api.Example.com',
    });
    const peer = (address: string) => () => address;
    expect(new ProxyTrust(false).origin(url, peer('127.0.0.1'), forwarded)).toBe('http://10.0.0.5:3030');
    const loopback = new ProxyTrust('loopback');
    expect(loopback.origin(url, peer('127.0.0.1'), forwarded)).toBe('https://api.example.com');
    expect(loopback.origin(url, peer('198.51.100.1'), forwarded)).toBe('http://10.0.0.5:3030');
    expect(loopback.origin(url, peer(''), forwarded)).toBe('http://10.0.0.5:3030');
    expect(loopback.origin(url, peer('127.0.0.1'), new Headers({ 'x-forwarded-proto': 'https' }))).toBe(
      'https://10.0.0.5:3030',
    );
    expect(loopback.origin(url, peer('127.0.0.1'), new Headers())).toBe('http://10.0.0.5:3030');
    const defaultPort = new Headers({
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'api.example.com:443',
    });
    expect(loopback.origin(url, peer('127.0.0.1'), defaultPort)).toBe('https://api.example.com');
    const malformed = new Headers({ 'x-forwarded-host': 'a b' });
    expect(loopback.origin(url, peer('127.0.0.1'), malformed)).toBe('http://10.0.0.5:3030');
  });
});

describe('the in-memory counts', () => {
  it('keep at most 100,000 clients: past that, the oldest window is forgotten first', () => {
    const limits = new RateLimits(
      {
        log: { error: () => undefined, info: () => undefined },
        onClose: () => undefined,
        onReady: () => undefined,
      },
      {},
    );
    const route = {
      method: 'POST',
      path: '/api/auth/login',
      definition: { rateLimits: [{ name: 'auth', max: 1, window: 60_000 }] },
    } as unknown as MountedRoute;
    const limiter = limits.limiterFor(route);
    if (limiter === undefined) throw new Error('no limiter');
    const check = (ip: string) => limiter.check(ip) as Record<string, string>;
    const address = (index: number) => `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;
    expect(check('192.0.2.1')['x-ratelimit-remaining']).toBe('0');
    expect(() => check('192.0.2.1')).toThrow(/Too many requests/);
    for (let index = 0; index < 100_000; index += 1) check(address(index));
    // Its window went to make room: counted afresh, so let through.
    expect(check('192.0.2.1')['x-ratelimit-remaining']).toBe('0');
    // The newest windows are kept.
    expect(() => check(address(99_999))).toThrow(/Too many requests/);
  });
});
