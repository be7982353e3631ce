import { describe, expect, it } from 'vitest';
import { decodeMarker, encodeMarker, readVerdict } from '../../src/forge/marker.js';
import { parseClosingRefs, parseYokeRunTrailer } from '../../src/forge/body-text.js';

const trusted = new Set(['yoke[bot]']);
const body = (sha: string, verdict: 'accept' | 'reject', run = 'r1') =>
  encodeMarker({ run, sha, verdict }, 'All 12 tests pass.');

describe('the verdict marker', () => {
  it('GH02 round-trips: a hidden versioned line for yoke, a summary for people', () => {
    const text = body('abcdef1', 'accept');
    expect(text.split('\n')[0]).toBe('<!-- yoke:verdict v1 {"run":"r1","sha":"abcdef1","verdict":"accept"} -->');
    expect(text).toContain('**yoke lander accepted** this PR at `abcdef1` (run `r1`).');
    expect(text).toContain('All 12 tests pass.');
    expect(decodeMarker(text)).toEqual({ kind: 'marker', payload: { run: 'r1', sha: 'abcdef1', verdict: 'accept' } });
  });

  it('GH02 counts only markers by yoke itself (or trusted logins); a forged one is ignored and said why', () => {
    const reading = readVerdict(
      [
        { id: 1, author: 'mallory', body: body('abcdef1', 'accept') },
        { id: 2, author: 'yoke[bot]', body: body('abcdef1', 'reject') },
      ],
      'abcdef1',
      trusted,
    );
    expect(reading.current).toEqual({ run: 'r1', sha: 'abcdef1', verdict: 'reject', commentId: 2 });
    expect(reading.ignored).toEqual([{ commentId: 1, author: 'mallory', reason: 'written by mallory, not by yoke' }]);
    const withOperator = readVerdict(
      [{ id: 1, author: 'Release-Bot', body: body('abcdef1', 'accept') }],
      'abcdef1',
      new Set(['release-bot']),
    );
    expect(withOperator.current?.verdict).toBe('accept');
  });

  it('GH02 a marker for an older head SHA is stale and never current; the newest trusted marker at the head wins', () => {
    const reading = readVerdict(
      [
        { id: 1, author: 'yoke[bot]', body: body('1111111', 'accept') },
        { id: 2, author: 'yoke[bot]', body: body('2222222', 'reject', 'r2') },
        { id: 3, author: 'yoke[bot]', body: body('2222222', 'accept', 'r3') },
      ],
      '2222222',
      trusted,
    );
    expect(reading.stale).toBe(1);
    expect(reading.current).toMatchObject({ run: 'r3', verdict: 'accept', commentId: 3 });
    expect(
      readVerdict([{ id: 1, author: 'yoke[bot]', body: body('1111111', 'accept') }], '3333333', trusted).current,
    ).toBeNull();
  });

  it('GH02 markers with bad JSON, unknown versions or bad fields are refused with a reason, never acted on', () => {
    expect(decodeMarker('<!-- yoke:verdict v1 {"run":"r1", sha: oops} -->')).toEqual({
      kind: 'invalid',
      reason: 'marker JSON does not parse',
    });
    expect(decodeMarker('<!-- yoke:verdict v9 {} -->')).toEqual({
      kind: 'invalid',
      reason: 'unknown marker version v9',
    });
    const bad = decodeMarker('<!-- yoke:verdict v1 {"run":"r1","sha":"zzz","verdict":"maybe"} -->');
    expect(bad.kind).toBe('invalid');
    if (bad.kind === 'invalid') expect(bad.reason).toContain('sha must be a hex commit id');
    const reading = readVerdict(
      [{ id: 5, author: 'yoke[bot]', body: '<!-- yoke:verdict v1 {not json} -->' }],
      'abcdef1',
      trusted,
    );
    expect(reading.current).toBeNull();
    expect(reading.ignored[0]?.reason).toBe('marker JSON does not parse');
    expect(decodeMarker('just a comment')).toEqual({ kind: 'none' });
  });

  it('reads closing keywords and the Yoke-Run trailer from a PR body', () => {
    expect(parseClosingRefs('Fixes #12, closes #3 and resolved: #12. Mentions #99.')).toEqual([3, 12]);
    expect(parseYokeRunTrailer('Adds the thing.\n\nYoke-Run: r1abc\n')).toBe('r1abc');
    expect(parseYokeRunTrailer('Yoke-Run: has spaces inside')).toBeNull();
  });
});
