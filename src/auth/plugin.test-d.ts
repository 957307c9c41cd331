import { describe, expectTypeOf, it } from 'vitest';
import { docsPlugin } from '../openapi/plugin.js';
import { createApp } from '../server/create-app.js';
import type { AccessClaims } from './jwt.js';
import { type AuthContext, type AuthPluginOptions, authPlugin } from './plugin.js';
import { TokenService } from './tokens.js';

interface User {
  id: string;
  role: 'admin' | 'user';
  isActive: boolean;
}

describe('authPlugin types', () => {
  it('registers with inferred user type', async () => {
    const app = createApp<AuthContext<User> & { db: string }>({ context: () => ({ db: 'x' }) });
    const tokens = new TokenService({ secret: 'x'.repeat(32) });
    await app.register(authPlugin, {
      tokens,
      userLoader: async (id: string, claims: AccessClaims): Promise<User | undefined> => {
        expectTypeOf(claims.type).toEqualTypeOf<'access'>();
        return { id, role: 'user', isActive: true };
      },
    });
    // A loader that omits a field the app's user type requires does not compile.
    // @ts-expect-error role and isActive are missing
    await app.register(authPlugin, { userLoader: (id) => ({ id }) });
    // @ts-expect-error role is missing
    await app.register(authPlugin, { userLoader: async (id) => ({ id, isActive: true }) });
    // A row with more fields than the user type is fine; a deleted user is undefined.
    await app.register(authPlugin, {
      userLoader: async (id) =>
        id === '' ? undefined : { id, role: 'admin', isActive: true, email: 'a@b.co' },
    });
  });

  it('takes any loader on an app whose context declares no user', async () => {
    const app = createApp({});
    await app.register(authPlugin, { userLoader: (id) => ({ id }) });
  });

  it('refuses a misspelt option at compile time', async () => {
    const app = createApp<AuthContext<User>>({});
    // @ts-expect-error userLoder is not an option
    await app.register(authPlugin, { userLoder: (id: string) => ({ id, role: 'user', isActive: true }) });
    await app.register(docsPlugin, {
      openapi: { info: { title: 'T', version: '1' } },
      // @ts-expect-error routePrefx is not an option
      routePrefx: '/docs',
    });
  });

  it('requires a user loader', () => {
    // @ts-expect-error userLoader is required
    const options: AuthPluginOptions<User> = { tokens: new TokenService({ secret: 'x'.repeat(32) }) };
    expectTypeOf(options).not.toBeAny();
  });
});
