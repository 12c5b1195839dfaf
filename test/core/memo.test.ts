/** core/memo.ts: a pure function's recent results, bounded, with nothing kept of an input that throws or is too long. */
import { describe, expect, it } from 'vitest';
import { remembered } from '../../core/memo.ts';

describe('remembered', () => {
  const counting = (limits = { entries: 3, longestInput: 8 }) => {
    const calls: string[] = [];
    const upper = remembered((s) => {
      calls.push(s);
      if (s === 'bad') throw new RangeError('bad input');
      return s.toUpperCase();
    }, limits);
    return { upper, calls };
  };

  it('computes an input once and answers it again from memory', () => {
    const { upper, calls } = counting();
    expect([upper('a'), upper('a'), upper('b'), upper('a')]).toEqual(['A', 'A', 'B', 'A']);
    expect(calls).toEqual(['a', 'b']);
  });

  it('keeps nothing of an input that throws: it throws again, computed again', () => {
    const { upper, calls } = counting();
    expect(() => upper('bad')).toThrow(RangeError);
    expect(() => upper('bad')).toThrow(RangeError);
    expect(calls).toEqual(['bad', 'bad']);
  });

  it('keeps no input longer than its bound, and empties itself when full', () => {
    const { upper, calls } = counting();
    upper('a-long-input');
    upper('a-long-input');
    for (const s of ['a', 'b', 'c', 'd', 'a']) upper(s);
    // Full at three: 'd' emptied it, so 'a' was computed again.
    expect(calls).toEqual(['a-long-input', 'a-long-input', 'a', 'b', 'c', 'd', 'a']);
  });
});
