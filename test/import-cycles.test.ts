/**
 * The framework's modules import each other without cycles (docs/architecture.md, "Layers"): a
 * cycle makes what loads first depend on who imported whom, and hides a layer that knows too
 * much. Type-only imports are left out: they are gone once compiled.
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

/** Every import or re-export of a value from another module of the source, as file paths. */
function importsOf(file: string, known: Set<string>): string[] {
  const text = readFileSync(file, 'utf8');
  const statements = text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'(\.[^']+)'/gms);
  return [...statements]
    .map((match) => resolve(dirname(file), (match[1] as string).replace(/\.js$/, '.ts')))
    .filter((path) => known.has(path));
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

describe('the modules of src/', () => {
  it('import one another without a cycle', () => {
    const files = modules(source);
    const known = new Set(files);
    const graph = new Map(files.map((file) => [file, importsOf(file, known)]));
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
