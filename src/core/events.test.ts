import { describe, expect, it } from 'vitest';
import { EventSequence, epochStart, resumeAfter, serverEvent } from './events.js';

describe('resumeAfter', () => {
  const log = { first: 1000n, newest: 1004n };

  it('resumes after an id the log gave out, or before its first', () => {
    expect(resumeAfter('1002', log)).toBe(1002n);
    expect(resumeAfter('1004', log)).toBe(1004n);
    expect(resumeAfter('999', log)).toBe(999n);
    // Header values arrive trimmed; a value with its spaces still names the same id.
    expect(resumeAfter('  1003  ', log)).toBe(1003n);
  });

  it('sends a first connection live', () => {
    expect(resumeAfter(undefined, log)).toBeUndefined();
    expect(resumeAfter(undefined, log, { unplaced: 'replay' })).toBeUndefined();
  });

  it('never holds live events behind an id it cannot place: live by default, or all it keeps', () => {
    const unplaceable = [
      '1005', // above the newest: a restored database, a made-up id
      '999999999999999999',
      '9999999999999999999',
      '12', // below the epoch: before a restart
      '0',
      '-1',
      '1e3',
      '0x3e8',
      '',
      'abc',
      '10000000000000000000000', // past a bigint
    ];
    for (const id of unplaceable) {
      expect(resumeAfter(id, log), id).toBeUndefined();
      expect(resumeAfter(id, log, { unplaced: 'replay' }), id).toBe(999n);
    }
  });

  it('takes bounds as numbers or strings, as a database driver hands them over', () => {
    expect(resumeAfter('7', { first: '5', newest: 9 })).toBe(7n);
    expect(resumeAfter('10', { first: 5, newest: '9' })).toBeUndefined();
  });
});

describe('EventSequence', () => {
  it('counts from the epoch it starts, so a restart’s ids are placed apart', () => {
    const before = new EventSequence(epochStart(1_000));
    const seen = [before.next(), before.next()];
    expect(seen).toEqual(['1000000', '1000001']);
    const after = new EventSequence(epochStart(1_001));
    expect(after.resumeAfter(seen[1])).toBeUndefined();
    expect(after.resumeAfter(seen[1], { unplaced: 'replay' })).toBe(1_000_999n);
    const next = after.next();
    expect(BigInt(next)).toBeGreaterThan(BigInt(seen[1] as string));
    expect(after.resumeAfter(next)).toBe(BigInt(next));
    expect(after.newest).toBe(BigInt(next));
  });

  it('starts at the time it is made, in ms × 1000', () => {
    const now = Date.now();
    const sequence = new EventSequence();
    expect(sequence.first).toBeGreaterThanOrEqual(BigInt(now) * 1000n);
    expect(sequence.newest).toBe(sequence.first - 1n);
  });
});

describe('serverEvent', () => {
  it("refuses the stream's own event names, which clients read as its end or a problem", () => {
    for (const event of ['close', 'end', 'error'])
      expect(() => serverEvent({}, { event })).toThrow(`the event name "${event}" is the stream's own`);
    expect(serverEvent({ n: 1 }, { event: 'tick', id: 1 })).toMatchObject({ event: 'tick', id: '1' });
  });
});
