import { describe, expectTypeOf, it } from 'vitest';
import { createApp } from '../server/app.js';
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
    await app.register(authPlugin, { userLoader: (id) => ({ id }) });
  });

  it('requires a user loader', () => {
    // @ts-expect-error userLoader is required
    const options: AuthPluginOptions<User> = { tokens: new TokenService({ secret: 'x'.repeat(32) }) };
    expectTypeOf(options).not.toBeAny();
  });
});
