import { describe, expect, it } from 'vitest';
import { landChainProblem } from '../../src/fleet/landing/land-commits.js';

// LD03: only yoke's pinned tree lands. A land commit is checked by its first-parent walk: one merge per head, in
// order, each of exactly two parents, down to the pinned base. What an attacker would hand yoke instead fails.

const B = 'b'.repeat(40);
const S1 = '1'.repeat(40);
const S2 = '2'.repeat(40);
const H = 'h'.repeat(40);
const X = 'x'.repeat(40);
const chain = { base: B, heads: [S1, S2, H] };
const good = new Map([
  ['m3', ['m2', H]],
  ['m2', ['m1', S2]],
  ['m1', [B, S1]],
]);

describe("the land commit is yoke's pinned tree (LD03)", () => {
  it('LD03 the base with the stack and the head merged on in order passes', () => {
    expect(landChainProblem(good, 'm3', chain)).toBeNull();
  });

  it("LD03 a writer's commit anywhere in the walk, a merge of the wrong head, heads out of order, an octopus and another base each fail, naming the commit", () => {
    // A commit pushed onto the land branch in the window, between the first merge and the second.
    const slipped = new Map([...good, ['m2', ['x1', S2]], ['x1', ['m1']]]);
    expect(landChainProblem(slipped, 'm3', chain)).toBe(
      "x1 is not yoke's merge of 1111111 onto the commit below it (its parents: m1)",
    );
    // The writer's commit on top, adopted as the land commit.
    expect(landChainProblem(new Map([...good, [X, ['m3']]]), X, chain)).toBe(
      "xxxxxxx is not yoke's merge of hhhhhhh onto the commit below it (its parents: m3)",
    );
    const swapped = new Map([...good, ['m2', ['m1', S1]], ['m1', [B, S2]]]);
    expect(landChainProblem(swapped, 'm3', chain)).toMatch(/^m2 is not yoke's merge of 2222222/);
    const octopus = new Map([...good, ['m3', ['m2', H, X]]]);
    expect(landChainProblem(octopus, 'm3', chain)).toMatch(/^m3 is not yoke's merge of hhhhhhh/);
    const elsewhere = new Map([...good, ['m1', [X, S1]]]);
    expect(landChainProblem(elsewhere, 'm3', chain)).toBe(
      'its first parents reach xxxxxxx, not the pinned base bbbbbbb',
    );
    expect(landChainProblem(new Map(), 'm3', chain)).toBe('GitHub has no commit m3');
  });
});
