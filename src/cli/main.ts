/**
 * The `proceed` executable's program (bin/proceed.js imports it). Importing it runs the CLI
 * with this process's arguments; everything reusable lives in the modules beside it.
 */
import { run } from './run.js';

const code = await run(process.argv.slice(2));
if (code !== undefined) process.exit(code);
