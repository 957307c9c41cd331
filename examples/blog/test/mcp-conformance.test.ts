/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against the blog, for
 * the scenarios that apply to a server of tools without prompts, resources, logging or
 * completions (docs/mcp.md). Its CLI needs Node 22 (`fs.globSync`), so it runs under Bun from the
 * `bun` dev dependency. The scenarios left out ask for the reference server's own test tools
 * (`test_simple_text`, `test_error_handling`, …) or for features the endpoint does not have.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { engines, useBlog } from './harness.js';

const [pglite] = engines();
if (pglite === undefined) throw new Error('No PGlite engine');

const require = createRequire(import.meta.url);
const bun = require.resolve('bun/bin/bun.exe');
const cli = require.resolve('@modelcontextprotocol/conformance/dist/index.js');

/** The scenarios that apply to the blog's endpoint, each of which must pass whole. */
const applicable = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

function runScenario(url: string, scenario: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bun, [cli, 'server', '--url', url, '--scenario', scenario], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('the MCP conformance suite against the blog', () => {
  const blog = useBlog(pglite);

  it.each(applicable)('passes %s', async (scenario) => {
    const { code, output } = await runScenario(`${blog.origin}/mcp`, scenario);
    expect(output, output).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    expect(code, output).toBe(0);
  });
});
