#!/usr/bin/env node
/**
 * `prepack`, which npm runs before `npm pack` and `npm publish` here, and before the `pack`
 * script too (`npm run pack` runs `prepack` first, as any script's `pre` script). Plain `npm pack`
 * or `npm publish` would ship this repository's package.json, scripts and dev dependencies
 * included: refused, with the way to pack. `npm run pack` (scripts/pack.mjs) is let through.
 * Publishing is refused by every client anyway: the repository's package.json is `private`.
 */
// npm 7-10 name a script's run `run-script`, npm 11 `run`; pnpm sets it too. A client that does
// not say (yarn, bun) is refused, as plain `npm pack` is.
const command = process.env.npm_command;
if (command !== 'run' && command !== 'run-script') {
  process.stderr.write(
    'Pack the framework with `npm run pack` (scripts/pack.mjs): its package.json leaves out what only this repository uses\n',
  );
  process.exit(1);
}
