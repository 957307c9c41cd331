/**
 * What a tool call of getPost costs beyond its REST call, part by part (docs/performance.md, "MCP
 * tools/call against the same REST call"). One server (the posts app with its tools and the routes
 * of bench/servers/mcp-parts.ts) takes, in alternating rounds: the REST read; the same answer from
 * an app route (the read without its procedure); the tool call's POST read and parsed, its result
 * given as it is (the transport alone); the same plus `app.callProcedure` (the call without the
 * endpoint's own layers); and the tool call itself. Reported: the server's CPU per request, and
 * each part ÷ the REST read of the same round, medians. MCP_PARTS_ROUNDS (default 7) and
 * MCP_PARTS_SECONDS (default 3).
 */
import { cpuTimeOf, measureWithWrk, median, type Scenario, startServer, stopServer } from './compare.js';
import { getPath } from './servers/posts.js';

const rounds = Number(process.env.MCP_PARTS_ROUNDS ?? 7);
const seconds = Number(process.env.MCP_PARTS_SECONDS ?? 3);
const postId = getPath.split('/').at(-1) as string;
const toolCall = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'getPost', arguments: { id: postId } },
});
const post = (name: string, path: string): Scenario => ({
  name,
  method: 'POST',
  path,
  body: toolCall,
  expectStatus: 200,
});
const parts: Scenario[] = [
  { name: 'REST read', method: 'GET', path: getPath, expectStatus: 200 },
  { name: 'app route, same answer', method: 'GET', path: `/parts/get/${postId}`, expectStatus: 200 },
  post('POST read and parsed', '/parts/read'),
  post('+ app.callProcedure', '/parts/call'),
  post('tools/call', '/mcp'),
];
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const { info, child } = await startServer({
  name: 'proceed',
  script: './servers/proceed-posts.ts',
  env: { BENCH_OFF: 'request-log', BENCH_MCP: '1', BENCH_MCP_PARTS: '1' },
});
try {
  const cpu = new Map<string, number[]>(parts.map((part) => [part.name, []]));
  for (const part of parts) await measureWithWrk(`${info.address}${part.path}`, part, headers, 1, part.name);
  for (let round = 0; round < rounds; round++)
    for (const part of parts) {
      const before = cpuTimeOf(child.pid);
      const sample = await measureWithWrk(`${info.address}${part.path}`, part, headers, seconds, part.name);
      cpu.get(part.name)?.push((cpuTimeOf(child.pid) - before) / (sample.total ?? Number.NaN));
    }
  // Each part ÷ the REST read of its own round: the parts of a round run seconds apart, where the
  // VM's speed may change between rounds.
  const rest = cpu.get('REST read') ?? [];
  console.log(`\nA tool call of getPost taken apart (${rounds} rounds × ${seconds}s, one server, medians)`);
  console.log("| part | server CPU µs/req | ÷ REST read (its round) | rounds' ratios |\n|---|---:|---:|---|");
  for (const part of parts) {
    const values = cpu.get(part.name) ?? [];
    const ratios = values.map((value, round) => value / (rest[round] ?? Number.NaN));
    const spread = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
    console.log(`| ${part.name} | ${median(values).toFixed(1)} | ${median(ratios).toFixed(3)} | ${spread} |`);
  }
} finally {
  await stopServer(child);
}
