import { describe, expect, it } from 'vitest';
import { assignOwn } from './objects.js';

describe('assignOwn', () => {
  it('copies own keys in order, the later source winning, as a spread does', () => {
    const target = assignOwn(assignOwn({} as Record<string, unknown>, { a: 1, b: 2 }), { b: 3, c: 4 });
    expect(target).toEqual({ a: 1, b: 3, c: 4 });
    expect(Object.keys(target)).toEqual(['a', 'b', 'c']);
  });

  it('copies from objects without a prototype, as routers and query parsers make them', () => {
    const params = Object.create(null) as Record<string, string>;
    params.id = '7';
    expect(assignOwn({}, params)).toEqual({ id: '7' });
  });

  it('leaves inherited keys behind', () => {
    const source = Object.create({ inherited: true }) as Record<string, unknown>;
    source.own = 1;
    expect(assignOwn({}, source)).toEqual({ own: 1 });
  });

  it('copies a __proto__ key as data, never as the prototype', () => {
    const source = JSON.parse('{"__proto__":{"polluted":true},"x":1}') as object;
    const target = assignOwn({} as Record<string, unknown>, source);
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect((target as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.hasOwn(target, '__proto__')).toBe(true);
    expect(target).toEqual({ ...source });
  });

  it('takes nothing from undefined or null', () => {
    expect(assignOwn({ a: 1 }, undefined)).toEqual({ a: 1 });
    expect(assignOwn({ a: 1 }, null)).toEqual({ a: 1 });
  });
});
