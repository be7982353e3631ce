import { describe, expect, it } from 'vitest';
import { judgeReading, type ReaderFacts } from '../../src/http/operator/doctor-reading.js';
import { readingFacts } from '../../src/http/operator/doctor.js';
import { ManualClock } from '../helpers/fleet.js';
import { testStore } from '../helpers/test-store.js';

// SC08: `yoke doctor` says which yoke process reads a repository's installation, and how the reading is spread.

const a: ReaderFacts = { id: 'p-aaaaaaaaaaaa', host: 'web-1', pid: 41, installations: [1, 3] };
const b: ReaderFacts = { id: 'p-bbbbbbbbbbbb', host: 'web-2', pid: 77, installations: [2] };

describe('SC08 the doctor shows who reads what', () => {
  it('SC08 names the process reading the installation and every process with its share', () => {
    expect(judgeReading({ installationId: 2, readers: [a, b], holder: b.id })).toEqual({
      state: 'ok',
      text: 'Installation 2 is read by yoke process p-bbbbbbbbbbbb (host web-2, pid 77). 2 yoke processes share the reading: p-aaaaaaaaaaaa (host web-1, pid 41) reads 1, 3; p-bbbbbbbbbbbb (host web-2, pid 77) reads 2.',
      fix: null,
    });
    expect(judgeReading({ installationId: 9, readers: [a, { ...b, installations: [] }], holder: null })).toEqual({
      state: 'ok',
      text: 'No process has taken installation 9 yet: the pass reads it itself until one does, at its next tick. 2 yoke processes share the reading: p-aaaaaaaaaaaa (host web-1, pid 41) reads 1, 3; p-bbbbbbbbbbbb (host web-2, pid 77) reads nothing yet.',
      fix: null,
    });
  });

  it('SC08 one process, or none yet, reads everything', () => {
    expect(judgeReading({ installationId: 1, readers: [a], holder: a.id }).text).toBe(
      'One yoke process, p-aaaaaaaaaaaa (host web-1, pid 41), reads every installation, this one (1) too.',
    );
    expect(judgeReading({ installationId: 1, readers: [], holder: null }).text).toBe(
      'No yoke process has taken a share of the reading yet: the pass reads installation 1 itself.',
    );
  });

  it('SC08 fails an installation leased to a process that no longer runs, and says what recovers it', () => {
    expect(judgeReading({ installationId: 3, readers: [b], holder: 'p-dead00000000' })).toEqual({
      state: 'failed',
      text: 'Installation 3 is leased to yoke process p-dead00000000, which no longer runs: no process reads it until that lease lapses.',
      fix: "Nothing, if a yoke server runs on this store: it takes installation 3 over at its next tick once that process's lease has lapsed (30 s after its death). If none runs, start one (`npm start`, or your service manager's unit).",
    });
  });

  it('SC08 reads the reading processes and the leases in force from the store, leaving out a process that reads nothing', async () => {
    const clock = new ManualClock();
    const store = testStore(clock);
    for (const [id, pid] of [
      ['p-1', 1],
      ['p-2', 2],
      ['door', 3],
    ] as const)
      await store.processes.register({ id, host: 'h', pid, leaseMs: 60_000 });
    await store.processes.markReader('p-1');
    await store.processes.markReader('p-2');
    await store.installationLeases.claim(5, 'p-2', 10_000);
    await store.installationLeases.claim(6, 'p-1', 10_000);
    await store.installationLeases.claim(7, 'door', 1_000);
    clock.advance(2_000);
    expect(await readingFacts(store, 5)).toEqual({
      installationId: 5,
      holder: 'p-2',
      readers: [
        { id: 'p-1', host: 'h', pid: 1, installations: [6] },
        { id: 'p-2', host: 'h', pid: 2, installations: [5] },
      ],
    });
    // A lapsed lease is no one's.
    expect((await readingFacts(store, 7)).holder).toBeNull();
  });
});
