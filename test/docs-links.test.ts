/**
 * Every link between the project's documents lands: the file exists, and a `#fragment` names a
 * heading of it as GitHub spells its anchor (lower case, punctuation dropped, spaces as hyphens,
 * a repeated heading numbered). Links out of the repository are not followed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  'examples/blog/README.md',
  'packages/create-proceed/README.md',
].filter((path) => existsSync(join(root, path)));

/** The text outside fenced code blocks, where a `#` line is a heading and `](…)` a link. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** GitHub's anchor for a heading's text. */
function anchorOf(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorsByFile = new Map<string, Set<string>>();
function anchorsIn(path: string): Set<string> {
  let anchors = anchorsByFile.get(path);
  if (anchors === undefined) {
    anchors = new Set();
    const seen = new Map<string, number>();
    for (const [, heading] of prose(readFileSync(path, 'utf8')).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
      const anchor = anchorOf(heading as string);
      const count = seen.get(anchor) ?? 0;
      seen.set(anchor, count + 1);
      anchors.add(count === 0 ? anchor : `${anchor}-${count}`);
    }
    // An explicit anchor (`<a id="…">`) is a target too.
    for (const [, id] of readFileSync(path, 'utf8').matchAll(/<a\s+(?:id|name)="([^"]+)"/g))
      anchors.add(id as string);
    anchorsByFile.set(path, anchors);
  }
  return anchors;
}

describe('links between documents', () => {
  it.each(documents)('%s: every relative link names a file and a heading that exist', (document) => {
    const from = join(root, document);
    const broken: string[] = [];
    for (const [, target] of prose(readFileSync(from, 'utf8')).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const link = target as string;
      if (/^[a-z][a-z\d+.-]*:/i.test(link)) continue;
      const [path = '', fragment] = link.split('#');
      const file = path === '' ? from : resolve(dirname(from), decodeURI(path));
      if (!existsSync(file)) {
        broken.push(`${link}: no file ${relative(root, file)}`);
        continue;
      }
      if (
        fragment !== undefined &&
        file.endsWith('.md') &&
        !anchorsIn(file).has(decodeURIComponent(fragment))
      )
        broken.push(`${link}: no heading of ${relative(root, file)} has the anchor #${fragment}`);
    }
    expect(broken).toEqual([]);
  });
});
