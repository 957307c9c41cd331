/**
 * Run before every test file (vitest.config.ts `setupFiles`): after each test, the processes the
 * test helpers launched and that still run are killed, so that none outlives its test file. Here,
 * not in the helpers themselves: files share their worker's modules, and a hook a helper module
 * registered when first imported would belong to that first file alone.
 */
import { afterEach } from 'vitest';
import { killLaunched as killBlogProcesses } from '../examples/blog/test/support.js';
import { killLaunched } from './processes.js';

// The blog's own suites, run from here, get what examples/blog/test/kill-launched.setup.ts gives
// them when the blog runs them alone.
afterEach(() => {
  killLaunched();
  killBlogProcesses();
});
