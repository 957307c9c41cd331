/**
 * What an app checks and loads once every plugin is loaded, before it serves: a mistake in how
 * the routes and plugins fit together is a start-up error that says what to do, never a failure
 * at the first request.
 */
import { ProceedConfigError } from '../core/errors.js';
import type { Guard } from '../core/guards.js';
import type { MountedRoute } from '../core/route-table.js';
import { type UploadOptions, uploadPlanOf } from '../core/uploads.js';
import { entityTagsReady } from '../http/entity-tags.js';
import { uploadContentReady } from '../http/upload-content.js';

export async function checkAtStartUp(
  routes: readonly MountedRoute[],
  app: {
    entityTags: boolean;
    uploads: UploadOptions | undefined;
    /** What loads `ctx.user`; undefined when nothing does. */
    userSource: string | undefined;
    hasIdempotencyStore: boolean;
  },
): Promise<void> {
  // Tags are hashed on every GET unless turned off; versioned answers and files keep theirs anyway.
  const tagsAnyway = routes.some(
    ({ definition }) => definition.versioning !== undefined || definition.output?.kind === 'download',
  );
  if (app.entityTags || tagsAnyway) await entityTagsReady();
  // file-type, an optional peer, is loaded only for routes that check uploads by content.
  await uploadContentReady(
    routes
      .filter((route) => uploadPlanOf(route, app.uploads)?.checkContent)
      .map((route) => `${route.collection}.${route.name}`),
  );
  if (app.userSource === undefined) refuseGuardsWithoutUser(routes);
  if (app.hasIdempotencyStore) return;
  const needy = routes.filter((route) => route.definition.idempotent);
  if (needy.length > 0)
    throw new ProceedConfigError(
      `${needy.map((route) => `${route.collection}.${route.name}`).join(', ')} ${needy.length === 1 ? 'is' : 'are'} .idempotent(), but the app has no idempotency store: register idempotencyPlugin from proceedjs/idempotency`,
    );
}

/**
 * A guard that needs a signed-in user cannot pass where nothing sets `ctx.user`: one that says so
 * (`requiresUser`), and one that reads the user's fields (`reads`), which no user ever has here.
 */
function refuseGuardsWithoutUser(routes: readonly MountedRoute[]): void {
  const needsUser = (guard: Guard<never>) => guard.requiresUser === true || (guard.reads?.length ?? 0) > 0;
  const needy = routes.filter((route) => route.definition.guards.some(needsUser));
  const [first] = needy;
  if (first === undefined) return;
  const guard = first.definition.guards.find(needsUser)?.name ?? '';
  const others =
    needy.length > 1 ? ` (and ${needy.length - 1} more route${needy.length > 2 ? 's' : ''})` : '';
  throw new ProceedConfigError(
    `${first.collection}.${first.name} (${first.method} ${first.path}) has guard "${guard}", which needs a signed-in user, but nothing on this app sets ctx.user${others}: register authPlugin from proceedjs/auth (await app.register(authPlugin, { userLoader })); if your context sets user itself, createApp({ userFromContext: true }); if a plugin of yours sets it, call app.providesUser('yourPlugin') there`,
  );
}
