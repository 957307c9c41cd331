import { describe, expect, it } from 'vitest';
import { guard } from '../core/guards.js';
import { admin, allOf, anyOf, authenticated, hasRole } from './guards.js';

type Ctx = { user?: { id: string; role: string } | undefined };

const signedIn = (role: string): Ctx => ({ user: { id: 'u', role } });
const anonymous: Ctx = {};

const calls: string[] = [];
const recording = (name: string, answer: boolean) =>
  guard({
    name,
    check: () => {
      calls.push(name);
      return answer;
    },
  });

describe('guards', () => {
  it('authenticated passes for any signed-in user', async () => {
    expect(authenticated.name).toBe('authenticated');
    expect(authenticated.requiresUser).toBe(true);
    expect(await authenticated.check(signedIn('guest'))).toBe(true);
    expect(await authenticated.check(anonymous)).toBe(false);
    expect(await authenticated.check({ user: null } as never)).toBe(false);
  });

  it('admin passes only for the admin role, and is named "admin"', async () => {
    expect(admin.name).toBe('admin');
    expect(admin.requiresUser).toBe(true);
    expect(await admin.check(signedIn('admin'))).toBe(true);
    expect(await admin.check(signedIn('user'))).toBe(false);
    expect(await admin.check(anonymous)).toBe(false);
  });

  it('says the roles it lets in, as the OpenAPI document names them; a guard refuses roles that are none', () => {
    expect(admin.roles).toEqual(['admin']);
    expect(hasRole('editor', 'admin').roles).toEqual(['editor', 'admin']);
    expect(authenticated.roles).toBeUndefined();
    // All of them: the roles every member lets in; any of them: each member's, if each names some.
    expect(allOf(authenticated, hasRole('editor', 'admin'), admin).roles).toEqual(['admin']);
    expect(allOf(hasRole('editor'), admin).roles).toBeUndefined();
    expect(anyOf(hasRole('editor'), admin).roles).toEqual(['editor', 'admin']);
    expect(anyOf(authenticated, admin).roles).toBeUndefined();
    for (const roles of [[], [''], 'admin', [1]])
      expect(() => guard({ name: 'odd', roles: roles as never, check: () => true })).toThrow(
        'guard "odd": roles is a list of one role name or more',
      );
  });

  it('hasRole passes for any listed role and is named after them', async () => {
    const staff = hasRole('editor', 'admin');
    expect(staff.name).toBe('role:editor|admin');
    expect(await staff.check(signedIn('editor'))).toBe(true);
    expect(await staff.check(signedIn('admin'))).toBe(true);
    expect(await staff.check(signedIn('user'))).toBe(false);
    expect(() => hasRole()).toThrow(TypeError);
  });

  it('allOf needs every member, stops at the first failure, and requires a user if any member does', async () => {
    calls.length = 0;
    const both = allOf(recording('a', false), recording('b', true));
    expect(both.name).toBe('a and b');
    expect(both.requiresUser).toBeUndefined();
    expect(await both.check(anonymous as never)).toBe(false);
    expect(calls).toEqual(['a']);
    expect(allOf(recording('a', true), admin).requiresUser).toBe(true);
    expect(await allOf(authenticated, hasRole('editor')).check(signedIn('editor'))).toBe(true);
  });

  it('anyOf needs one member, stops at the first success, and requires a user only if all members do', async () => {
    calls.length = 0;
    const either = anyOf(recording('a', true), recording('b', false));
    expect(either.name).toBe('a or b');
    expect(await either.check(anonymous as never)).toBe(true);
    expect(calls).toEqual(['a']);
    expect(either.requiresUser).toBeUndefined();
    expect(anyOf(admin, hasRole('editor')).requiresUser).toBe(true);
    expect(await anyOf(admin, hasRole('editor')).check(signedIn('user'))).toBe(false);
  });

  it('parenthesizes nested composites in the name', () => {
    const owner = guard({ name: 'owner', requiresUser: true, check: () => true });
    expect(allOf(authenticated, anyOf(owner, admin)).name).toBe('authenticated and (owner or admin)');
    expect(() => anyOf()).toThrow(TypeError);
  });
});
