import { Leadership } from '../../src/leadership.js';
import { silentLog } from '../../src/kernel/log.js';
import { openStoreAt } from '../../src/store/store.js';

// A yoke process whose own clock is wrong (test/leadership.test.ts, TR31):
// every clock this process reads is shifted by skewMs. It asks once to lead
// the ticks of the store at `target` and prints whether it does.
// argv: target holder skewMs

const [target, holder, skewArg] = process.argv.slice(2) as [string, string, string];
const skew = Number(skewArg);
const realNow = Date.now.bind(Date);
Date.now = () => realNow() + skew;
const store = await openStoreAt(target, { mustExist: true });
const leadership = new Leadership({
  leaders: store.leaders,
  processId: holder,
  log: silentLog,
  policy: { leaseMs: 60_000, renewMs: 20_000 },
});
const leads = await leadership.holds();
console.log(JSON.stringify({ holder, ownClock: new Date(Date.now()).toISOString(), leads }));
await store.close();
