import { attachPlan } from '../../src/delivery/gate/attach.js';
import { OPERATOR, type Actor, type DeliveryContext } from '../../src/delivery/context.js';
import {
  qaWork,
  recordQaVerdict,
  waiveQaCase,
  type QaTarget,
  type VerdictBody,
  type WaiveBody,
} from '../../src/delivery/gate/verdicts.js';
import { createDeploymentRun } from '../../src/delivery/runs/deployment-runs.js';
import type { Store } from '../../src/store/store.js';
import type { FakeForge } from './fake-forge.js';
import { makeHarness, type Harness, type ManualClock } from './fleet.js';

// A repository that has delivered three merged items: a delivery section,
// two QA plans, and claims whose PRs GitHub merged.

export const REPO = 'acme/api';

export const DELIVERY = {
  stages: [
    { name: 'staging', kind: 'deploy', command: './deploy.sh staging' },
    { name: 'staging-qa', kind: 'qa' },
    { name: 'production', kind: 'deploy', command: './deploy.sh production' },
  ],
  steering: 'maint',
};

export const PLANS: Record<string, string> = {
  '.github/yoke/qa/checkout.yml': [
    'name: checkout',
    'cases:',
    '  - {id: cart, title: Cart total, run: ./qa/cart.sh}',
    '  - {id: looks-right, title: Looks right, manual: true, review: independent}',
  ].join('\n'),
  '.github/yoke/qa/smoke.yml': [
    'name: smoke',
    'cases:',
    '  - {id: health, title: Health, run: ./qa/health.sh}',
    '  - {id: flaky, title: Flaky, run: ./qa/flaky.sh}',
  ].join('\n'),
};

/** The head yoke merged item n's claim PR at. */
export const mergedHead = (n: number): string => `${n}`.repeat(40).slice(0, 40).replace(/^./, 'c');

export interface DeliveryHarness extends Harness {
  /** The merge commit of each item's claim PR. */
  merged: Map<number, string>;
  attach: (issue: number, ref: string, by?: string) => Promise<string>;
}

/** Items 1-3 merged (PRs 101-103); the harness knows them as claims, GitHub as merged PRs. */
export async function makeDeliveryHarness(
  opts: {
    config?: Record<string, unknown>;
    items?: number[];
    mergedByHand?: number[];
    plans?: Record<string, string>;
    forge?: FakeForge;
    clock?: ManualClock;
    store?: Store;
  } = {},
): Promise<DeliveryHarness> {
  const h = makeHarness({ forge: opts.forge, clock: opts.clock, store: opts.store });
  h.forge.addRepo(REPO, { prefix: 'APP', delivery: DELIVERY, ...opts.config });
  await h.store.repos.ensure(REPO, 1, h.clock.now() - 1);
  // TR11: the steering maintainer waives and removes; alice, a writer, approves manual cases.
  Object.assign(h.forge.repo(REPO).permissions, { maint: 'maintain', alice: 'write' });
  h.forge.commit(REPO, opts.plans ?? PLANS);
  const merged = new Map<number, string>();
  for (const n of opts.items ?? [1, 2, 3]) {
    h.forge.repo(REPO).issues.push({ number: n, labels: [], open: false, stateReason: 'completed' });
    await h.store.claims.record({
      repo: REPO,
      prNumber: 100 + n,
      runId: `afk-${n}`,
      issueNumber: n,
      recordedAt: h.clock.now(),
    });
    merged.set(n, h.forge.mergePull(REPO, { number: 100 + n, author: 'agent', headSha: mergedHead(n) }));
    // yoke merged it at its validated head, which an independent review must approve (unless a person merged it by hand).
    if (!opts.mergedByHand?.includes(n))
      await h.store.merges.record({
        repo: REPO,
        prNumber: 100 + n,
        headSha: mergedHead(n),
        state: 'merged',
        detail: null,
        at: h.clock.now(),
        runId: `lander-${n}`,
      });
  }
  const attach = async (issue: number, ref: string, by = 'maint') => {
    const r = await attachPlan(h.fleet, { repo: h.forge.repo(REPO).ref, issue }, { ref, by, source: 'command' });
    if (!r.ok) throw new Error(r.refusal.message);
    return r.value.planId;
  };
  return { ...h, merged, attach };
}

/** Items 1-3 in one deployment run created by maint: 1 owns checkout (assigned to alice), 2 and 3 share smoke. */
export async function threeItemRun(h: DeliveryHarness): Promise<{ run: string; tracking: number | null }> {
  await h.attach(1, 'checkout');
  await h.attach(2, 'smoke');
  await h.attach(3, 'smoke');
  h.forge.repo(REPO).issues.find((i) => i.number === 1)!.assignee = 'alice';
  const r = await createDeploymentRun(h.fleet, { repo: REPO, creator: 'maint' });
  if (!r.ok) throw new Error(r.refusal.message);
  return { run: r.value.id, tracking: r.value.trackingIssue };
}

/** TR11: the credential a test's request comes with: a login's person token, or an operator token when it names nobody. */
export const actorOf = (by?: string): Actor => (!by || by === 'operator' ? OPERATOR : { role: 'person', login: by });

/** A verdict recorded with the credential of whoever `by` names. */
export const recordAs = (
  ctx: DeliveryContext,
  runId: string,
  stage: string,
  body: Omit<VerdictBody, 'source'> & { source?: VerdictBody['source'] },
) => recordQaVerdict(ctx, actorOf(body.by), { runId, stage }, { source: 'yoke qa case run', ...body });

/** A waiver given with `by`'s own person token. */
export const waiveAs = (ctx: DeliveryContext, runId: string, stage: string, body: WaiveBody & { by: string }) => {
  const { by, ...rest } = body;
  return waiveQaCase(ctx, actorOf(by), { runId, stage }, rest);
};

export const workOf = (ctx: DeliveryContext, runId: string, stage: string, target: QaTarget) =>
  qaWork(ctx, OPERATOR, { runId, stage }, target);
