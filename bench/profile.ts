import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

// The bench's idle passes under V8's CPU profiler, when asked for (BENCH_PROFILE_PASS).

/** `fn`, under V8's CPU profiler when `file` is set (BENCH_PROFILE_PASS): the profile is written there, for DevTools. */
export async function profiled<T>(file: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (!file) return fn();
  const session = new Session();
  session.connect();
  const post = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    );
  await post('Profiler.enable');
  // Every 100 µs, not V8's 1 ms: a pass of a few hundred milliseconds gets thousands of samples.
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}
