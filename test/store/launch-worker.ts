// A second yoke process, for the cross-process test: it records launches
// against a shared database file as fast as it can, ends some of its runs to
// keep the fleet hovering at the cap, and reports the most live runs it saw.
import { recordLaunch } from '../../src/fleet/runs/launch.js';
import { openStore } from '../../src/store/store.js';
import { newWorkCandidate } from '../helpers/candidates.js';

const [dbPath, worker, attempts, cap] = process.argv.slice(2) as [string, string, string, string];
const store = openStore(dbPath);
let n = 0;
let launched = 0;
let maxSeen = 0;
const mine: string[] = [];
const launcher = { name: 'command', usesSecret: () => false } as never;
for (let i = 0; i < Number(attempts); i++) {
  const res = await recordLaunch(
    { store, launcher, clock: { now: () => Date.now() }, newRunId: () => `${worker}-${++n}` },
    newWorkCandidate('acme/api', i, `issue#${worker}-${i}`),
    Number(cap),
  );
  if (res.kind === 'recorded') {
    launched++;
    mine.push(res.runId);
  }
  maxSeen = Math.max(maxSeen, await store.runs.countLive());
  if (i % 3 === 2 && mine.length) await store.runs.end(mine.shift()!, 'success', null, Date.now());
}
console.log(JSON.stringify({ worker, launched, maxSeen }));
await store.close();
