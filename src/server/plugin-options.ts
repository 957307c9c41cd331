/** The types of a plugin's options, as `app.register` reads them (src/server/app.ts). */

/**
 * A plugin's options as a function of the app's context type: `options` may read `this['ctx']`.
 * `authPlugin` uses it so that its `userLoader` must return the context's user.
 *
 * @example
 * interface AuthOptionsFor extends PluginOptionsKind {
 *   readonly options: AuthPluginOptions<UserOf<this['ctx']>>;
 * }
 */
export interface PluginOptionsKind {
  readonly ctx: unknown;
  readonly options: unknown;
}

/** The options `app.register(plugin, …)` takes on an app whose context is `TCtx`. */
export type PluginOptions<P, TCtx> = P extends { readonly '~options'?: infer K extends PluginOptionsKind }
  ? (K & { readonly ctx: TCtx })['options']
  : P extends (app: never, options: infer O) => unknown
    ? O
    : never;
