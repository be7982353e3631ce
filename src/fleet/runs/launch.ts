import { createHash, randomBytes } from 'node:crypto';
import { LeadershipLost } from '../../kernel/fence.js';
import type { Forge, RepoRef } from '../../forge/types.js';
import { REJECTION_LIMIT, type Launcher, type LaunchSpec } from '../../launcher/launcher.js';
import type { Log } from '../../kernel/log.js';
import type { Clock } from '../../kernel/clock.js';
import { activeRef, type Tracer } from '../../kernel/trace.js';
import { issueSpan, issueTraceparent } from '../notices/issue-trace.js';
import { isAfkKind, type Run, type RunKind } from '../../store/fleet/runs.js';
import type { Store } from '../../store/store.js';
import type { Candidate } from '../candidate.js';
import { baseRefOf, landingRecord, type RepoFacts } from '../repo-facts.js';
import { prepareLandCommit } from '../landing/land-commits.js';
import { isPaused } from '../repo-state.js';
import type { LaunchAttempt } from '../spawn/spawn-pass.js';
import { endRun } from './strikes.js';
import { fixBrief } from '../spawn/asks.js';
import { digestNow } from '../spawn/approval.js';
import {
  budgetLines,
  budgetWait,
  overBudget,
  reservationFor,
  holdersOf,
  type BudgetLedger,
  type BudgetLine,
  type FleetBudgets,
} from '../money/budgets.js';
import type { Refusal } from '../../kernel/codes/table.js';
import { errorText } from '../../kernel/error-text.js';

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** What the locked launch uses of a pass's launch dependencies. */
type LockedLaunch = Pick<LaunchDeps, 'store' | 'launcher' | 'clock' | 'newRunId'>;

export type Recorded = { kind: 'recorded'; runId: string; secret: string | null; deadline: number; liveAfter: number };

/** BU01: what a launch reserves, and the budgets it must stay within. */
export interface Money {
  reserve: number | null;
  budgets: readonly BudgetLine[];
}

/**
 * The authoritative cap check (SP06) and money check (BU01): in one write (store.runs.recordLaunch),
 * re-count live runs fleet-wide, refuse at or above the repo's cap, refuse a reservation that would take any
 * budget past its limit, and otherwise record the run with its reservation (and consume its request) before
 * any launcher is called.
 */
export async function recordLaunch(
  deps: LockedLaunch,
  c: Candidate,
  cap: number,
  { pendingRef = null, money = { reserve: null, budgets: [] } }: { pendingRef?: string | null; money?: Money } = {},
): Promise<
  | Recorded
  | { kind: 'over_cap'; freshCount: number }
  | { kind: 'subject_busy' }
  | { kind: 'paused' }
  | { kind: 'over_budget'; why: Refusal }
> {
  const now = deps.clock.now();
  const runId = deps.newRunId();
  const secret = deps.launcher.usesSecret(c.kind) ? randomBytes(32).toString('base64url') : null;
  const deadline = now + c.budgetMinutes * 60_000;
  // The count, the checks, the record and the request it consumes are one write (one round trip on PostgreSQL).
  const live = await deps.store.runs.recordLaunch(
    {
      id: runId,
      repo: c.repo,
      kind: c.kind,
      subject: c.subject,
      issueNumber: c.issueNumber,
      prNumber: c.prNumber,
      headSha: c.headSha,
      launchedAt: now,
      budgetDeadline: deadline,
      launcher: deps.launcher.name,
      launcherRef: pendingRef,
      secretHash: secret ? hashSecret(secret) : null,
      capAtLaunch: cap,
      title: c.title ?? null,
      reservedUsd: money.reserve,
    },
    cap,
    // SP15: a repository paused earlier in this same pass launches no more AFK work.
    isAfkKind(c.kind),
    c.requestId,
    money.budgets.map((b) => ({ repo: b.repo, since: b.since, limitUsd: b.limitUsd, newWork: b.newWork })),
  );
  if (live !== null) return { kind: 'recorded' as const, runId, secret, deadline, liveAfter: live };
  // Refused: why, read just after (what changed in between only changes the reason given).
  const fresh = await deps.store.runs.countLive();
  if (fresh >= cap) return { kind: 'over_cap' as const, freshCount: fresh };
  if (await deps.store.runs.liveForSubject(c.repo, c.subject)) return { kind: 'subject_busy' as const };
  const repo = await deps.store.repos.get(c.repo);
  if (isAfkKind(c.kind) && repo && isPaused(repo)) return { kind: 'paused' as const };
  const held = new Map<BudgetLine, number>();
  for (const b of money.budgets) held.set(b, await deps.store.spend.charged(b));
  const over = overBudget(money.budgets, (b) => held.get(b) ?? 0, money.reserve ?? 0);
  if (over) {
    const holders = holdersOf(await deps.store.spend.holdings(over.line.since), over.line);
    const why = budgetWait(c.repo, over, money.reserve ?? 0, holders);
    return { kind: 'over_budget' as const, why };
  }
  return { kind: 'over_cap' as const, freshCount: fresh }; // it was at the cap; a run has ended since
}

/** Records, then starts. A launcher that throws leaves an ended run, never a lost one. */
export async function lockedLaunch(
  deps: LockedLaunch,
  c: Candidate,
  launch: {
    cap: number;
    where: { workflow: string; ref: string };
    spec: (rec: Recorded, landSha: string | null) => LaunchSpec;
    onLaunchFailed: (runId: string, detail: string) => Promise<void>;
    /** LD03: builds the commit a lander is to judge, once its run is recorded (null: it merges the heads itself). */
    prepare?: () => Promise<string | null>;
    money?: Money;
  },
): Promise<LaunchAttempt> {
  const { cap, where, spec, onLaunchFailed, prepare, money } = launch;
  const rec = await recordLaunch(deps, c, cap, {
    pendingRef: deps.launcher.pendingRef(where),
    ...(money ? { money } : {}),
  });
  if (rec.kind !== 'recorded') return rec;
  // TR33: before it starts, the run says why it started and carries its asks; a run that never starts
  // hands them back (onLaunchFailed), so an ask is never lost to a launch that failed.
  await deps.store.asks.carry(rec.runId, c.why, c.asks ?? [], c.repo);
  // LD01: the base the lander validates on, before it starts (a run that lost it judged no base, and lands nothing).
  if (c.baseSha) await deps.store.runs.setJudgedTree(rec.runId, c.baseSha, c.stack ?? []);
  try {
    const landSha = prepare ? await prepare() : null;
    if (landSha) await deps.store.runs.setLandSha(rec.runId, landSha);
    const { ref } = await deps.launcher.start(spec(rec, landSha));
    if (ref) await deps.store.runs.setLauncherRef(rec.runId, ref);
    return { kind: 'launched', runId: rec.runId };
  } catch (err) {
    const detail = errorText(err);
    await onLaunchFailed(rec.runId, detail);
    // TR31: fenced out, the whole pass stops; the new leader's pass re-derives it.
    if (err instanceof LeadershipLost) throw err;
    return { kind: 'launch_failed', runId: rec.runId, detail };
  }
}

export interface LaunchDeps {
  store: Store;
  launcher: Launcher;
  clock: Clock;
  newRunId: () => string;
  /** LD03: where a lander's commit is built, with fast-forward landing. */
  forge: Pick<Forge, 'pinBranch' | 'mergeIntoBranch' | 'commitParents'>;
  log: Log;
  apiUrl: string;
  pauseThreshold: number;
  /** BU01: the fleet's budgets, and this pass's ledger of what they hold (read before it, added to as it reserves). */
  budgets: FleetBudgets;
  ledger: BudgetLedger;
  /** The tracer of yoke's spans (the no-op unless tracing is on). */
  tracer?: Tracer;
}

/**
 * The agent's limits: the opt-in file's turns, and its dollars: BU02, BU04: what the run reserved against the
 * budgets, its whole limit, which the agent CLI is held to (a lander calls no model: the file's limit, if any).
 */
export function runLimits(
  facts: Pick<RepoFacts, 'config'>,
  kind: RunKind,
  reserved: number | null,
): LaunchSpec['limits'] {
  // TR35: a lander's tests reach the hosts validate.network.allow names, else the agent's.
  const allow =
    kind === 'lander'
      ? (facts.config.validate?.network.allow ?? facts.config.agent.network.allow)
      : facts.config.agent.network.allow;
  const maxUsd = kind === 'lander' || reserved === null ? (facts.config.agent.max_usd ?? null) : reserved;
  return {
    maxTurns: facts.config.agent.max_turns,
    maxUsd,
    ...(allow.length ? { networkAllow: allow } : {}),
  };
}

/** The newest rejection of the PR a fix repairs, at the head it starts from: its summary carries the failing output (its end, where the failure is). */
export function rejectionFor(c: Candidate, runs: readonly Run[]): string | null {
  if (c.kind !== 'fix' || c.prNumber === null) return null;
  const lander = [...runs]
    .reverse()
    .find((r) => r.kind === 'lander' && r.prNumber === c.prNumber && r.verdict !== null && r.headSha === c.headSha);
  if (lander?.verdict !== 'reject') return null;
  const text = lander.summary ?? `The lander rejected #${c.prNumber} at ${lander.headSha ?? 'its head'}.`;
  return text.length > REJECTION_LIMIT ? `…${text.slice(-REJECTION_LIMIT)}` : text;
}

/**
 * What a run is told to fix or heed (the `rejection` input): for a fix, always a brief as JSON (so the
 * lander's report, which the PR's own code printed, can never pass for what a writer asked); for new work,
 * a brief only when a writer gave instructions with `/yoke start`.
 */
export function briefFor(
  c: Candidate,
  facts: Pick<RepoFacts, 'runs' | 'asks' | 'view' | 'startableIssues'>,
): string | null {
  const keys = new Set((c.asks ?? []).map((k) => `${k.source}:${k.sourceId}`));
  const asks = (facts.asks ?? []).filter((a) => keys.has(`${a.source}:${a.sourceId}`));
  // TR24: the issue as this pass read it, which the decision found as approved: the runner works from nothing else.
  const digest = c.issueNumber === null ? null : digestNow(facts, c.issueNumber);
  const approved = digest !== null ? { issue: c.issueNumber!, digest } : undefined;
  if (c.kind !== 'fix' && !asks.length && !approved) return null;
  return JSON.stringify({
    ...fixBrief(rejectionFor(c, facts.runs), asks, c.headSha),
    ...(approved ? { approved } : {}),
  });
}

/** The facts a run starts with: its candidate, its recorded id and secret, where its workflow lives, and the agent's limits and rejection. */
export function buildLaunchSpec(
  c: Candidate,
  rec: Recorded,
  at: { repo: RepoRef; where: { workflow: string; ref: string }; apiUrl: string } & Pick<
    LaunchSpec,
    'limits' | 'rejection'
  > &
    Partial<Pick<LaunchSpec, 'landSha' | 'traceparent'>>,
): LaunchSpec {
  const { repo, where, apiUrl, ...extra } = at;
  return {
    runId: rec.runId,
    kind: c.kind,
    repo,
    subject: c.subject,
    issueNumber: c.issueNumber,
    prNumber: c.prNumber,
    headSha: c.headSha,
    baseSha: c.baseSha ?? null,
    stack: (c.stack ?? []).map((m) => m.head),
    landSha: null,
    deadline: rec.deadline,
    secret: rec.secret,
    apiUrl,
    workflow: where.workflow,
    ref: where.ref,
    ...extra,
  };
}

/**
 * BU01, BU02: what a candidate would reserve, against which budgets, and why it waits when the pass's ledger
 * says they cannot cover it (null: it fits, as far as the pass knows). Pure.
 */
export function moneyFor(
  c: Pick<Candidate, 'kind' | 'repo'>,
  facts: Pick<RepoFacts, 'config'>,
  deps: Pick<LaunchDeps, 'budgets' | 'ledger' | 'clock'>,
): Money & { shed: Refusal | null } {
  const budgets = budgetLines(c.repo, facts.config.budget, deps.budgets, c.kind, deps.clock.now());
  const reserve = reservationFor(c.kind, facts.config.agent.max_usd, budgets);
  const over = overBudget(budgets, (b) => deps.ledger.charged(b), reserve ?? 0);
  return {
    reserve,
    budgets,
    shed: over ? budgetWait(c.repo, over, reserve ?? 0, deps.ledger.holders(over.line)) : null,
  };
}

/** LD04: a lander on a branch where GitHub's merge queue is required lands by the queue, never by a fast-forward. */
function onMergeQueue(facts: RepoFacts, c: Candidate): boolean {
  const claim = facts.view.claims.find((x) => x.pull.number === c.prNumber);
  return claim !== undefined && facts.mergeQueues?.has(baseRefOf(facts, claim.pull)) === true;
}

/**
 * One candidate through the locked launch. A run whose launch failed never
 * started, so it has no outcome: it ends cancelled and moves no strike count
 * (a GitHub outage must not pause the fleet). The failure is in the pass report.
 */
export async function launchCandidate(
  deps: LaunchDeps,
  c: Candidate,
  cap: number,
  facts: RepoFacts,
): Promise<LaunchAttempt> {
  const repo = facts.repo;
  const workflow = facts.config.launcher.workflow;
  const ref = facts.config.launcher.ref ?? facts.view.defaultBranch ?? 'main';
  // BU01, BU02: the budgets this run spends from and what it reserves; the pass's ledger sheds what cannot fit
  // before the store is asked, and the locked launch checks the same sums under its lock.
  const { reserve, budgets, shed } = moneyFor(c, facts, deps);
  if (shed) return { kind: 'over_budget', why: shed };
  const started = deps.clock.now();
  const traceparent = await issueTraceparent(deps, { repo: c.repo, issue: c.issueNumber });
  const result = await lockedLaunch(deps, c, {
    cap,
    where: { workflow, ref },
    spec: (rec, landSha) =>
      buildLaunchSpec(c, rec, {
        repo,
        where: { workflow, ref },
        apiUrl: deps.apiUrl,
        limits: runLimits(facts, c.kind, reserve),
        rejection: briefFor(c, facts),
        landSha,
        ...(traceparent ? { traceparent } : {}),
      }),
    onLaunchFailed: async (runId, detail) => {
      await deps.store.asks.reopen(runId);
      // BU02: a run that never started gives its reservation back.
      await deps.store.spend.release(runId);
      const run = await deps.store.runs.get(runId);
      if (run)
        await endRun(deps.store, run, {
          outcome: 'cancelled',
          reason: `launch failed: ${detail}`,
          now: deps.clock.now(),
          pauseThreshold: deps.pauseThreshold,
        });
    },
    prepare: c.landSha
      ? async () => c.landSha!
      : c.kind === 'lander' && c.baseSha && facts.config.autoland.fast_forward && !onMergeQueue(facts, c)
        ? async () =>
            // The landers launched earlier in this same pass are in the store, not yet in the facts.
            prepareLandCommit(
              deps,
              repo,
              c,
              landingRecord({ ...facts, runs: await deps.store.runs.listForRepo(c.repo) }),
            )
        : undefined,
    money: { reserve, budgets },
  });
  if (result.kind === 'launched' && reserve) deps.ledger.add(repo.fullName, c.kind, reserve);
  if (result.kind === 'launched') {
    // The launch, in its issue's trace, linked to the pass that made it.
    const pass = activeRef();
    await issueSpan(deps, { repo: c.repo, issue: c.issueNumber }, `yoke.launch ${c.kind}`, {
      start: started,
      attributes: { 'yoke.run.id': result.runId, 'yoke.run.kind': c.kind, 'yoke.why': c.why },
      ...(pass ? { links: [pass] } : {}),
    });
  }
  deps.log.info(
    { repo: c.repo, kind: c.kind, subject: c.subject, cap, result: result.kind, why: c.why },
    'launch decision',
  );
  return result;
}
