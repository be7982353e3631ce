import { attachDemoPlans, deliverDemo } from '../../sandbox/deliver.js';
import { Sandbox, type SandboxOptions } from '../../sandbox/sandbox.js';

/**
 * The whole mission, as `npm run sandbox` runs it (five labelled issues merged, then delivered through staging,
 * scoped QA and production, and closed out), on a sandbox with these settings; resolved once the last run ended.
 */
export async function runMission(launcher: SandboxOptions['launcher'], env: Record<string, string>): Promise<Sandbox> {
  const sandbox = new Sandbox({ launcher, failAgent: 0, tickSeconds: 1, reaperSeconds: 1, env });
  await sandbox.start();
  await attachDemoPlans(sandbox);
  await sandbox.waitUntil(() => sandbox.done(), 150_000, 'the demo issues to merge');
  await deliverDemo(sandbox, { dropAnswers: 0, log: () => {}, timeoutMs: 90_000 });
  await sandbox.waitUntil(
    async () => (await sandbox.runtime.store.runs.countLive()) === 0,
    20_000,
    'the last runs to be reaped',
  );
  return sandbox;
}
