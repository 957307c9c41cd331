import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest file (minutes: it installs and tests scaffolded apps) first, so that it starts at
 * once on a worker of its own instead of after the other projects' files: Vitest's own order
 * puts the projects one after another (the blog on Bun, on Deno, then the rest), which started it
 * two minutes in and left one worker finishing it alone.
 */
const longest = ['test/scaffold.test.ts'];

/**
 * Then the files that start servers, browsers, databases on disk or whole apps, so that the
 * two workers finish together instead of one waiting on a long file that happened to start last.
 * Vitest orders by the durations of the previous run once it has one (node_modules/.vite); a
 * fresh clone, as in CI, has none, and Vitest keeps the order it found the files in.
 */
const slow =
  /(cli|npm-start|workers|package|persistence|seed|admin-seed|connect|auth|users|posts)\.test\.ts$|\.browser\.test\.ts$/;

function rank(file: TestSpecification): number {
  const place = longest.findIndex((name) => file.moduleId.endsWith(`/${name}`));
  if (place >= 0) return place;
  return slow.test(file.moduleId) ? longest.length : longest.length + 1;
}

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: within a rank, Vitest's own order stays.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
