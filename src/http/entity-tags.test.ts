import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ifMatchHolds, matchingTag } from './entity-tags.js';

describe('tag comparisons over multi-digit versions (properties)', () => {
  const version = fc.nat({ max: 1_000_000 }).map(String);
  // Half the pairs equal: independent draws from a million would seldom meet.
  const versions = fc.oneof(
    fc.tuple(version, version),
    version.map((same): [string, string] => [same, same]),
  );
  const hash = fc.stringMatching(/^[0-9a-f]{16}$/);

  it('If-Match holds a tag only when it names the same version and body, any coding, never weak', () => {
    fc.assert(
      fc.property(versions, hash, fc.constantFrom('', '-gzip', '-br'), ([sent, current], h, coding) => {
        const tag = `"${current}.${h}"`;
        expect(ifMatchHolds(`"${sent}.${h}${coding}"`, tag)).toBe(sent === current);
        expect(ifMatchHolds(`W/"${current}.${h}"`, tag)).toBe(false);
      }),
    );
  });

  it('If-None-Match matches the same version and body (weakly too) and names the tag it matched', () => {
    fc.assert(
      fc.property(versions, hash, fc.boolean(), ([sent, current], h, weak) => {
        const held = `${weak ? 'W/' : ''}"${sent}.${h}-gzip"`;
        expect(matchingTag(`"other", ${held}`, `"${current}.${h}"`)).toBe(
          sent === current ? held : undefined,
        );
      }),
    );
  });
});
