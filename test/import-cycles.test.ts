/**
 * The framework's modules import each other without cycles (docs/architecture.md, "Layers"): a
 * cycle makes what loads first depend on who imported whom, and hides a layer that knows too
 * much. Type-only imports count too: a cycle of types is a cycle of knowledge, even if it is
 * gone once compiled.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const source = fileURLToPath(new URL('../src/', import.meta.url));

function modules(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return modules(path);
    return /(?<!\.test|\.test-d|\.d)\.ts$/.test(entry.name) ? [path] : [];
  });
}

function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string) => {
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) found.push([...path.slice(at), next]);
      else if (!done.has(next)) visit(next);
    }
    path.pop();
    done.add(node);
  };
  for (const node of graph.keys()) if (!done.has(node)) visit(node);
  return found;
}

/** Every import or re-export from another module of the source, type-only ones included. */
function allImportsOf(file: string, known: Set<string>): string[] {
  const text = readFileSync(file, 'utf8');
  const statements = text.matchAll(/^(?:import|export)\s+[^;]*?\bfrom\s+'(\.[^']+)'/gms);
  return [...statements]
    .map((match) => resolve(dirname(file), (match[1] as string).replace(/\.js$/, '.ts')))
    .filter((path) => known.has(path));
}

/**
 * What each layer of src/ may import besides itself (docs/architecture.md, "Layers"): a lower
 * layer never knows a higher one, not even by a type. Layers not named here (the plugins, the
 * CLI, the package entry) stand above all of these.
 */
const allowedBelow: Readonly<Record<string, readonly string[]>> = {
  core: [],
  config: ['core'],
  http: ['core', 'config'],
  server: ['core', 'config', 'http'],
  stores: ['core'],
  client: ['core'],
  'tanstack-query': ['client', 'core'],
  resource: ['core'],
  pagination: ['core'],
};

function layerOf(file: string): string {
  return (relative(source, file).split('/')[0] ?? '').replace(/\.ts$/, '');
}

function layerBreaches(files: string[]): string[] {
  const known = new Set(files);
  return files.flatMap((file) => {
    const layer = layerOf(file);
    const allowed = allowedBelow[layer];
    if (allowed === undefined) return [];
    return allImportsOf(file, known)
      .filter((imported) => layerOf(imported) !== layer && !allowed.includes(layerOf(imported)))
      .map((imported) => `${relative(source, file)} → ${relative(source, imported)}`);
  });
}

describe('the layers of src/', () => {
  it('import only the layers below them', () => {
    expect(layerBreaches(modules(source))).toEqual([]);
  });
});

describe('the modules of src/', () => {
  it('import one another without a cycle', () => {
    const files = modules(source);
    const known = new Set(files);
    const graph = new Map(files.map((file) => [file, allImportsOf(file, known)]));
    expect(files.length).toBeGreaterThan(50);
    const shown = cycles(graph).map((cycle) => cycle.map((file) => relative(source, file)).join(' → '));
    expect(shown).toEqual([]);
  });

  it('finds a cycle where there is one', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c', 'a']]);
  });
});

/**
 * What asks which runtime runs the process: the globals only one runtime has, Workers' user
 * agent. Only src/http/runtime.ts (which picks) and the files of src/http/runtimes/ (which use
 * their own runtime's globals) may; everything else reads the `runtime` object.
 */
const runtimeSniffing =
  /\bglobalThis\b[^\n;]*\b(?:Bun|Deno|navigator)\b|\bnavigator\.userAgent\b|\bprocess\.versions\.(?:bun|deno)\b/;

function runtimeDetections(files: readonly string[]): string[] {
  return files
    .map((file) => relative(source, file))
    .filter((file) => file !== join('http', 'runtime.ts') && !file.startsWith(join('http', 'runtimes')))
    .filter((file) => runtimeSniffing.test(readFileSync(join(source, file), 'utf8')));
}

describe('runtime detection', () => {
  it('happens in src/http/runtime.ts and the runtime files only', () => {
    expect(runtimeDetections(modules(source))).toEqual([]);
  });

  it('is found where it is written', () => {
    expect(
      runtimeSniffing.test("const isDeno = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined';"),
    ).toBe(true);
    expect(
      runtimeSniffing.test('(globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent'),
    ).toBe(true);
    expect(runtimeSniffing.test('if (runtime.streamsKeepLength) return;')).toBe(false);
  });
});
