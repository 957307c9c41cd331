#!/usr/bin/env node
// The `proceed` command: the compiled CLI, in this very process, so a compiled app runs on plain
// node and a signal sent to this process reaches the server. TypeScript entries and
// `proceed dev` start a child process with tsx themselves (dist/cli/typescript.js).
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    'proceed: dist/cli/main.js is missing. In a checkout of Proceed, run `npm run build` first.\n',
  );
  process.exit(1);
}
await import(main.href);
