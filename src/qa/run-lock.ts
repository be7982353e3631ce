// One gate check or sweep of a deployment run at a time in this process: two
// interleaved would both see a notice missing and both post it. The store's
// transactions stay the backstop across processes.

const chains = new WeakMap<object, Map<string, Promise<unknown>>>();

/** Runs fn after every earlier fn of the same run (keyed per store, so separate stores never wait on each other). */
export function serialRun<T>(store: object, runId: string, fn: () => Promise<T>): Promise<T> {
  let byRun = chains.get(store);
  if (!byRun) chains.set(store, (byRun = new Map()));
  const before = byRun.get(runId) ?? Promise.resolve();
  const next = before.then(fn, fn);
  const settled = next.catch(() => undefined);
  byRun.set(runId, settled);
  void settled.then(() => {
    if (byRun.get(runId) === settled) byRun.delete(runId);
  });
  return next;
}
