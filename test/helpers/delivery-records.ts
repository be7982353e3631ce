import type { DeliveryResult } from '../../sandbox/deliver.js';
import type { Sandbox } from '../../sandbox/sandbox.js';

// What the forge holds of the demo's delivery, as the mission e2e (test/sandbox/mission.e2e.test.ts) and the
// PostgreSQL e2e, whose driver has two of its dispatch answers dropped, both find it.

/** What the forge holds of the delivery, with run ids and SHAs taken out, in a comparable shape. */
export async function deliveryRecords(sandbox: Sandbox, result: DeliveryResult) {
  const strip = (s: string) => s.replaceAll(result.run, 'RUN').replace(/\b[0-9a-f]{40}\b/g, 'SHA');
  const pullOf = (n: number) =>
    [...sandbox.repo.issues.values()].find((i) => i.pull && i.body.includes(`Closes #${n}`))!.number;
  const prs = new Map([1, 2, 3, 4, 5].map((n) => [pullOf(n), n]));
  const notices = (await sandbox.runtime.store.notices.forRun(result.run))
    .map((n) => `${n.recipientKind}:${strip(n.subject)}:${n.state}`)
    .sort();
  const closeouts = sandbox.repo.comments
    .filter((c) => prs.has(c.issueNumber) && c.body.includes('is delivered: deployment run'))
    .map((c) => prs.get(c.issueNumber)!);
  const holderNoticesAboutShared = sandbox.repo.comments.filter(
    (c) => prs.has(c.issueNumber) && c.body.includes(`${result.run}-g`),
  ).length;
  const issues = [1, 2, 3, 4, 5].map((n) => {
    const i = sandbox.repo.issues.get(n)!;
    return [
      n,
      i.state,
      i.stateReason,
      i.labels.filter((l) => l.startsWith('yoke:delivered') || l === 'yoke:delivery-owed').sort(),
    ];
  });
  return { notices, closeouts, holderNoticesAboutShared, issues, status: result.status, exits: result.driverExits };
}

/**
 * The demo's delivery, as every mission leaves it whatever dispatch answers were lost on the way (close-outs sorted;
 * DEMO-5, with no plan, is closed out first): the driver stopped once at the flaky triage (3), then resumed to
 * production; every issue closed as delivered; the holder's and the driver's notices resolved, the group's withdrawn.
 */
export const DEMO_DELIVERY_RECORDS = {
  notices: ['driver:DEMO-1:resolved', 'driver:RUN-g1:withdrawn', 'holder:DEMO-1:resolved'],
  closeouts: [1, 2, 3, 4, 5],
  holderNoticesAboutShared: 0,
  issues: [1, 2, 3, 4, 5].map((n) => [n, 'closed', 'completed', ['yoke:delivered']]),
  status: 'succeeded',
  exits: [3, 0],
};

/** The records with their close-outs in issue order, to compare with DEMO_DELIVERY_RECORDS. */
export const sortedRecords = async (sandbox: Sandbox, result: DeliveryResult) => {
  const r = await deliveryRecords(sandbox, result);
  return { ...r, closeouts: [...r.closeouts].sort() };
};
