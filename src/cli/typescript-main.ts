/**
 * The CLI's program in a process that node started with tsx (`node --import tsx`): the same
 * commands, and TypeScript entries load as they are. `runWithTypeScript` starts it.
 */
import { run } from './run.js';
import { typescriptLoaded } from './typescript.js';

typescriptLoaded();
const code = await run(process.argv.slice(2));
if (code !== undefined) process.exit(code);
