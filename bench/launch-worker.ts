// One yoke process recording locked launches as fast as it can (bench/engines.ts):
// argv: target (a SQLite file or postgres:// URL), worker name, how many.
// It times only the launches, after a warm-up, and prints what it recorded.
import { recordLaunch } from '../src/fleet/runs/launch.js';
import { openStoreAt } from '../src/store/store.js';

const [target, worker, count] = process.argv.slice(2) as [string, string, string];
const store = await openStoreAt(target);
let n = 0;
let launched = 0;
const launcher = { name: 'command', usesSecret: () => false } as never;
for (let i = 0; i < Number(count); i++) {
  const res = await recordLaunch(
    { store, launcher, clock: { now: () => Date.now() }, newRunId: () => `${worker}-${++n}` },
    {
      stage: 'new_work',
      repo: `bench/repo-${i % 50}`,
      installationId: 1,
      kind: 'afk_auto',
      subject: `issue#${worker}-${i}`,
      issueNumber: i,
      prNumber: null,
      headSha: null,
      budgetMinutes: 30,
      requestId: null,
      why: 'bench',
    },
    1_000_000,
  );
  if (res.kind === 'recorded') launched++;
}
console.log(JSON.stringify({ worker, launched }));
await store.close();
