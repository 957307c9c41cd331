import { describe, expect, it } from 'vitest';
import type { RouteRequest } from '../http/app-routes.js';
import { Exposure } from './exposure.js';

const request = (headers: Record<string, string | undefined>): RouteRequest =>
  ({ method: 'POST', path: '/mcp', headers }) as unknown as RouteRequest;

describe('the hosts an MCP endpoint answers to', () => {
  it('refuses a request without Host, before and after an allowed one was seen', () => {
    const exposure = new Exposure({ path: '/mcp' });
    exposure.listening('127.0.0.1');
    expect(() => exposure.refuseForeign(request({}))).toThrow(/host \(none\)/);
    exposure.refuseForeign(request({ host: '127.0.0.1:3000' }));
    expect(() => exposure.refuseForeign(request({}))).toThrow(/host \(none\)/);
    const named = new Exposure({ path: '/mcp', allowedHosts: ['api.example'] });
    expect(() => named.refuseForeign(request({}))).toThrow(/host \(none\)/);
  });

  it('answers loopback names only where the app listens on a loopback interface, IPv6 included', () => {
    for (const listening of ['127.0.0.1', 'localhost', '::1']) {
      const exposure = new Exposure({ path: '/mcp' });
      exposure.listening(listening);
      for (const host of ['localhost:3030', '127.0.0.1', '[::1]:3030', 'LOCALHOST'])
        expect(() => exposure.refuseForeign(request({ host }))).not.toThrow();
      expect(() => exposure.refuseForeign(request({ host: 'rebound.example:3030' }))).toThrow(/rebound/);
    }
    // Any address of 127.0.0.0/8, and IPv4's loopback as IPv6 writes it, is a loopback interface.
    for (const listening of ['127.0.0.2', '127.1.2.3', '::ffff:127.0.0.1']) {
      const exposure = new Exposure({ path: '/mcp' });
      exposure.listening(listening);
      for (const host of ['127.0.0.2:3030', 'localhost', '[::ffff:127.0.0.1]:80'])
        expect(() => exposure.refuseForeign(request({ host }))).not.toThrow();
      expect(() => exposure.refuseForeign(request({ host: 'rebound.example:3030' }))).toThrow(/rebound/);
      expect(() => exposure.refuseForeign(request({ host: '127.0.0.2.rebound.example' }))).toThrow(/rebound/);
    }
    const open = new Exposure({ path: '/mcp' });
    open.listening('0.0.0.0');
    expect(() => open.refuseForeign(request({ host: 'api.example' }))).not.toThrow();
  });

  it('remembers an allowed Host without letting another through', () => {
    const exposure = new Exposure({ path: '/mcp', allowedHosts: ['api.example'] });
    exposure.refuseForeign(request({ host: 'api.example' }));
    expect(() => exposure.refuseForeign(request({ host: 'other.example' }))).toThrow(/other\.example/);
    exposure.refuseForeign(request({ host: 'api.example:443' }));
    exposure.refuseForeign(request({ host: 'api.example' }));
  });
});
