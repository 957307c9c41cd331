/**
 * No page says that something Proceed ships is missing. A sentence that claims absence ("not
 * there yet", "is not supported", …), or any sentence of a section titled so, must not name a
 * feature another page documents (a page's title, as docs/events.md is "Server-sent events") nor
 * a public export of the package (`eventStream`). Docs fall behind the code one sentence at a
 * time; this is the sentence it catches. README.md, "Development", says so for contributors.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from './processes.js';

/** Words that say something is missing. */
const absence =
  /\b(?:not (?:there|available|supported|implemented|done|built) yet|not yet (?:there|available|supported|implemented|built)|(?:is|are) not supported|isn't supported|aren't supported|unsupported|coming soon|no support for|lacks?)\b/i;
/** A section whose every sentence is a claim of absence. */
const absenceHeading = /^#{2,6}\s.*\b(?:not there yet|not yet|missing|unsupported|limitations)\b/i;

/** The public names of every entry point, as an app imports them. */
async function publicExports(): Promise<Set<string>> {
  const entries = [
    'src/index.ts',
    'src/auth/index.ts',
    'src/resource/index.ts',
    'src/pagination/index.ts',
    'src/openapi/index.ts',
    'src/client/index.ts',
    'src/idempotency/index.ts',
    'src/metrics/index.ts',
    'src/mcp/index.ts',
    'src/config/index.ts',
  ];
  const names = new Set<string>();
  for (const entry of entries) {
    for (const name of Object.keys(await import(join(root, entry)))) names.add(name);
  }
  return names;
}

/** What docs/*.md document as shipped: each page's title, before any colon or parenthesis. */
function shippedTitles(pages: readonly { file: string; text: string }[]): string[] {
  return pages
    .map(({ text }) => /^# (.+)$/m.exec(text)?.[1] ?? '')
    .map((title) => title.replace(/`/g, '').split(/[:(]/)[0]?.trim().toLowerCase())
    .filter((title): title is string => title !== undefined && title.length > 3);
}

/** A page's sentences that claim absence, each with its line. Code blocks are left out. */
function absenceClaims(text: string): { line: number; sentence: string }[] {
  const claims: { line: number; sentence: string }[] = [];
  let inCode = false;
  let inAbsenceSection = false;
  const lines = text.split('\n');
  let paragraph: { line: number; text: string } | undefined;
  const flush = () => {
    if (paragraph === undefined) return;
    const { line, text: prose } = paragraph;
    for (const sentence of prose.split(/(?<=[.;!?])\s+(?=[A-Z`*(])/)) {
      if (inAbsenceSection || absence.test(sentence)) claims.push({ line, sentence: sentence.trim() });
    }
    paragraph = undefined;
  };
  lines.forEach((raw, index) => {
    if (/^\s*(`{3,}|~{3,})/.test(raw)) {
      flush();
      inCode = !inCode;
      return;
    }
    if (inCode) return;
    if (/^#{1,6}\s/.test(raw)) {
      flush();
      inAbsenceSection = absenceHeading.test(raw);
      return;
    }
    if (raw.trim() === '' || /^\s*([-*]|\d+\.|\|)\s/.test(raw)) flush();
    if (raw.trim() === '') return;
    paragraph =
      paragraph === undefined
        ? { line: index + 1, text: raw.trim() }
        : { ...paragraph, text: `${paragraph.text} ${raw.trim()}` };
  });
  flush();
  return claims;
}

/** What a claim names that is shipped: a page title or a backticked public export. */
function shippedNamedBy(sentence: string, titles: readonly string[], exports: ReadonlySet<string>): string[] {
  const lower = sentence.toLowerCase();
  const named = titles.filter((title) =>
    new RegExp(`\\b${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(lower),
  );
  for (const [, code = ''] of sentence.matchAll(/`([^`]+)`/g)) {
    const identifier = /^[A-Za-z_$][\w$]*/.exec(code)?.[0];
    if (identifier !== undefined && exports.has(identifier)) named.push(`\`${identifier}\``);
  }
  return named;
}

const pages = [
  { file: 'README.md', text: readFileSync(join(root, 'README.md'), 'utf8') },
  ...readdirSync(join(root, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => ({ file: `docs/${file}`, text: readFileSync(join(root, 'docs', file), 'utf8') })),
];

describe('the docs never say a shipped feature is missing', () => {
  it('finds no claim of absence that names a documented page or a public export', async () => {
    const titles = shippedTitles(pages.filter((page) => page.file.startsWith('docs/')));
    const exports = await publicExports();
    const contradictions: string[] = [];
    for (const page of pages) {
      for (const { line, sentence } of absenceClaims(page.text)) {
        const named = shippedNamedBy(sentence, titles, exports);
        if (named.length > 0)
          contradictions.push(`${page.file}:${line} says ${named.join(', ')} is missing: "${sentence}"`);
      }
    }
    expect(contradictions).toEqual([]);
  });

  it('catches the sentences it was written for', async () => {
    const titles = shippedTitles(pages.filter((page) => page.file.startsWith('docs/')));
    const exports = await publicExports();
    // docs/procedures.md before 9822488, while docs/events.md documented eventStream.
    const stale =
      'Files have a declaration of their own.\nServer-sent events are not there yet; until they are, serve them from a route on `app.server`\n(Node.js only).';
    const [claim] = absenceClaims(stale);
    expect(claim?.line).toBe(1);
    expect(shippedNamedBy(claim?.sentence ?? '', titles, exports)).toEqual(['server-sent events']);
    expect(shippedNamedBy('Streaming with `eventStream` is not supported yet.', titles, exports)).toContain(
      '`eventStream`',
    );
    // A section of what is missing: each of its sentences is a claim.
    const section = absenceClaims(
      '## What is not there yet\n\nWebSockets, for one.\n\n## Next\n\nWebSockets work.',
    );
    expect(section.map((found) => found.sentence)).toEqual(['WebSockets, for one.']);
    expect(shippedNamedBy('WebSockets, for one.', titles, exports)).toEqual(['websockets']);
  });
});
