/**
 * Small parts (docs/architecture.md, "Small parts"): no module of `src/` over 400 lines, and no
 * function on the request path (the pipeline in src/http/, the servers in src/server/) over 80.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const sources = (directory: string): string[] =>
  readdirSync(join(root, directory), { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : sources(path);
    return /\.tsx?$/.test(entry.name) && !/\.test(-d)?\.ts$|\.cases\.ts$/.test(entry.name) ? [path] : [];
  });

/** Lines as `wc -l` counts them: a last line ends with its newline. */
const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** Each function of a module longer than `most` lines: `path:line name (lines)`. */
function longFunctions(path: string, most: number): string[] {
  const text = readFileSync(join(root, path), 'utf8');
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = file.getLineAndCharacterOfPosition(node.getStart()).line;
      const lines = file.getLineAndCharacterOfPosition(node.getEnd()).line - first + 1;
      const name = node.name?.getText(file) ?? '(anonymous)';
      if (lines > most) found.push(`${path}:${first + 1} ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('small parts', () => {
  it('keeps every module of src/ within 400 lines', () => {
    const long = sources('src')
      .map((path) => ({
        path: relative(root, join(root, path)),
        lines: lineCount(readFileSync(join(root, path), 'utf8')),
      }))
      .filter(({ lines }) => lines > 400)
      .map(({ path, lines }) => `${path} (${lines} lines)`);
    expect(long).toEqual([]);
  });

  it('keeps every function on the request path within 80 lines', () => {
    const long = [...sources('src/http'), ...sources('src/server')].flatMap((path) =>
      longFunctions(path, 80),
    );
    expect(long).toEqual([]);
  });

  it('finds a long function where there is one', () => {
    expect(longFunctions('src/core/routes.ts', 80)).toEqual([
      expect.stringMatching(/^src\/core\/routes.ts:\d+ planRoutes/),
    ]);
  });
});
