import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that start servers, browsers, databases on disk or whole apps go first, so that the
 * two workers finish together instead of one waiting on a long file that happened to start last.
 * Vitest orders by the durations of the previous run once it has one (node_modules/.vite); a
 * fresh clone has none and would order by file size.
 */
const slow =
  /(cli|scaffold|npm-start|workers|package|persistence|seed|admin-seed|connect|auth|users|posts)\.test\.ts$|\.browser\.test\.ts$/;

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [
      ...sorted.filter((file) => slow.test(file.moduleId)),
      ...sorted.filter((file) => !slow.test(file.moduleId)),
    ];
  }
}
