/**
 * Proceed with the auth plugin: the same GET by id, once behind `authenticated` and once open.
 * The token is verified and the user loaded (from memory, so the measurement is the framework's
 * cost, not a database's) on every request.
 */
import { createApp, procedure, procedures } from 'proceedjs';
import {
  type AuthContext,
  authenticated,
  authPlugin,
  MemoryRevocationStore,
  TokenService,
} from 'proceedjs/auth';
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
import { announce } from './announce.js';
import { item } from './data.js';

interface User {
  id: string;
  role: 'user';
  isActive: boolean;
}
const users = new Map<string, User>([['u1', { id: 'u1', role: 'user', isActive: true }]]);
type Ctx = AuthContext<User>;

const Item = resource('Item', { public: { id: z.string(), title: z.string(), excerpt: z.string() } });
const getItem = (p: ReturnType<typeof procedure<Ctx>>) =>
  p
    .input(z.object({ id: z.uuid() }))
    .output(Item.public)
    .query(({ input }) => ({ ...item, id: input.id }));

const tokens = new TokenService({
  secret: 'a-benchmark-secret-of-at-least-32-bytes!',
  store: new MemoryRevocationStore(),
});
const guarded = procedures('guarded', { getItem: getItem(procedure<Ctx>().guard(authenticated)) });
const open = procedures('open', { getItem: getItem(procedure<Ctx>()) });

const app = createApp<Ctx>({ logger: false });
await app.register(authPlugin, { tokens, userLoader: (id: string) => users.get(id) });
app.mount([guarded, open]);
const { accessToken } = await tokens.issuePair('u1');
const address = await app.listen({ port: 0, handleSignals: false });
announce({ address, token: accessToken });
