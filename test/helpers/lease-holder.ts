import { createInterface } from 'node:readline';
import { silentLog } from '../../src/kernel/log.js';
import { DEFAULT_PROCESS_LEASE, localIdentity, reapDeadProcesses, startProcessLease } from '../../src/process-lease.js';
import { openStoreAt } from '../../src/store/store.js';

// A yoke process as the process-lease test (test/process-lease.test.ts, TR31)
// runs it, maybe in a container of its own: it takes its lease as yoke does
// (its identity read from this machine), holds a dispatch reservation, and
// prints what it is. Each line "reap" on stdin runs the renewal's reap and
// prints whom it judged dead; "stop" ends it.
// argv: target id

const [target, id] = process.argv.slice(2) as [string, string];
const store = await openStoreAt(target, { mustExist: true });
const clock = { now: () => Date.now() };
const deps = { store, clock, timers: { setInterval: () => 0, clearInterval: () => {} }, log: silentLog };
const lease = await startProcessLease(deps, DEFAULT_PROCESS_LEASE, id);
await store.dispatchRequests.reserve({
  requestId: `check-of-${id}`,
  runId: 'dr-1',
  stage: 'qa',
  envelopeHash: 'h',
  driver: 'drv',
  owner: id,
  at: clock.now(),
});
console.log(JSON.stringify({ ready: id, ...localIdentity() }));
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line === 'reap') console.log(JSON.stringify({ reaped: await reapDeadProcesses(deps, id) }));
  if (line === 'stop') break;
}
lines.close();
await lease.stop();
await store.close();
process.exit(0);
