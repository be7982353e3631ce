import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkoutIo } from '../../src/cli/exec.js';
import { runCli } from '../../src/cli/main.js';
import { DEMO_REPO, DEMO_TASKS, MAINTAINER } from '../../sandbox/demo-repo.js';
import { Sandbox } from '../../sandbox/sandbox.js';

// The sandbox the delivery end-to-end tests start from: three demo items that
// merge at their first lander, their plans attached, and a checkout of the
// merge commit where the maintainer runs the CLI.

export interface DeliverySandbox {
  sandbox: Sandbox;
  checkout: string;
  /** The CLI in the checkout: with the operator token, or `as` someone with their own person token. */
  yoke(args: string[], as?: string): Promise<{ code: number; out: string; err: string }>;
  stop(): Promise<void>;
}

export async function startDeliverySandbox(
  files: Record<string, string>,
  attach: (sandbox: Sandbox) => Promise<void>,
  attachments = 3,
): Promise<DeliverySandbox> {
  const sandbox = new Sandbox({
    launcher: 'command',
    failAgent: 0,
    tickSeconds: 1,
    reaperSeconds: 1,
    tasks: [DEMO_TASKS[0]!, DEMO_TASKS[1]!, DEMO_TASKS[3]!],
    files,
  });
  await sandbox.start();
  // Three tasks that merge at their first lander: delivery is what these tests are about.
  await sandbox.waitUntil(() => sandbox.done(), 150_000, 'the three demo issues to merge');
  await attach(sandbox);
  await sandbox.waitUntil(
    async () => (await sandbox.runtime.store.qa.attachments(DEMO_REPO)).length === attachments,
    30_000,
    `${attachments} attachments`,
  );
  const checkout = mkdtempSync(join(tmpdir(), 'yoke-checkout-'));
  execFileSync('git', ['clone', '--quiet', sandbox.repo.gitDir, checkout]);
  return {
    sandbox,
    checkout,
    async yoke(args, as) {
      const out: string[] = [];
      const err: string[] = [];
      // TR11: an operator token by default; a person's own token when they act as themselves.
      const token = as ? sandbox.personToken(as) : sandbox.apiToken;
      const code = await runCli(
        args,
        checkoutIo(
          checkout,
          { YOKE_URL: sandbox.yokeUrl, YOKE_TOKEN: token, YOKE_LOGIN: as ?? MAINTAINER },
          (l) => out.push(l),
          (l) => err.push(l),
        ),
      );
      return { code, out: out.join('\n'), err: err.join('\n') };
    },
    async stop() {
      await sandbox.stop();
      rmSync(checkout, { recursive: true, force: true });
    },
  };
}
