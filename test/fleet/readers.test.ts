import { describe, expect, it } from 'vitest';
import { assignReaders, planReaders } from '../../src/fleet/engine/readers.js';

// SC08, the pure half: which live process reads each installation, and what one process gives up and takes.

const range = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i);
const procs = (p: number) => range(p).map((i) => `p-${String(i).padStart(2, '0')}`);
const loads = (a: Map<number, string>) => {
  const by = new Map<string, number>();
  for (const p of a.values()) by.set(p, (by.get(p) ?? 0) + 1);
  return by;
};

describe('SC08 which process reads each installation', () => {
  it('SC08 gives every installation to exactly one live process, each process ⌊n/p⌋ or ⌈n/p⌉ of them', () => {
    for (let n = 0; n <= 60; n += 3)
      for (let p = 1; p <= 6; p++) {
        const a = assignReaders(range(n, 100), procs(p));
        expect([...a.keys()].sort((x, y) => x - y)).toEqual(range(n, 100));
        for (const owner of a.values()) expect(procs(p)).toContain(owner);
        const counts = procs(p).map((x) => loads(a).get(x) ?? 0);
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
        expect(counts.reduce((s, c) => s + c, 0)).toBe(n);
      }
    // Two processes over ten installations: five each (the aim: within 60/40).
    expect([...loads(assignReaders(range(10), procs(2))).values()]).toEqual([5, 5]);
  });

  it('SC08 answers the same on every process: the order the sets are listed in, and repeats, change nothing', () => {
    const a = assignReaders(range(40), procs(4));
    const b = assignReaders([...range(40)].reverse().concat([3, 3]), [...procs(4)].reverse().concat(['p-01']));
    expect([...b].sort((x, y) => x[0] - y[0])).toEqual([...a].sort((x, y) => x[0] - y[0]));
    expect(assignReaders(range(5), [])).toEqual(new Map());
  });

  it('SC08 moves a share of the installations when a process joins or leaves, not all of them', () => {
    const before = assignReaders(range(400), procs(3));
    const joined = assignReaders(range(400), procs(4));
    const moved = [...before].filter(([id, p]) => joined.get(id) !== p).length;
    // A fourth process takes a quarter (100); balancing moves a few more, never most of the fleet.
    expect(moved).toBeGreaterThanOrEqual(100);
    expect(moved).toBeLessThan(200);
    const left = assignReaders(
      range(400),
      procs(4).filter((p) => p !== 'p-02'),
    );
    expect([...joined].filter(([id, p]) => p !== 'p-02' && left.get(id) !== p).length).toBeLessThan(100);
  });

  it("SC08 a process gives up what is another's and takes what is its own", () => {
    const assigned = new Map([
      [1, 'p-a'],
      [2, 'p-b'],
      [3, 'p-a'],
    ]);
    // It holds 2 (now p-b's) and 9 (no longer listed): both released; 1 and 3 claimed (3 renewed).
    expect(planReaders('p-a', assigned, [2, 3, 9])).toEqual({ release: [2, 9], claim: [1, 3] });
    expect(planReaders('p-c', assigned, [])).toEqual({ release: [], claim: [] });
  });
});
