/**
 * Run before every test file (vitest.config.ts `setupFiles`): after each test, the processes
 * `launch` started and that still run are killed, so that none outlives its test file.
 */
import { afterEach } from 'vitest';
import { killLaunched } from './support.js';

afterEach(killLaunched);
