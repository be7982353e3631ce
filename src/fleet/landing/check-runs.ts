import { LANDER_CONTEXT } from '../../config/landing.js';
import { makeRefusal } from '../../kernel/codes/table.js';
import { classifyGitHubError } from '../../forge/errors.js';
import type { CheckRunWrite } from '../../forge/types.js';
import type { CheckRecord } from '../../store/fleet/check-runs.js';
import type { Run } from '../../store/fleet/runs.js';
import type { ProtectedHold } from '../../store/fleet/protected-holds.js';
import { protectedFileList } from '../notices/messages.js';
import { runUrl } from '../notices/links.js';
import { flippedVerdict } from '../spawn/verdicts.js';
import { stackWords, type Landed, type LandingRecord } from '../stacks.js';
import { repoRefOf } from '../repo-state.js';
import type { Io } from '../context.js';

// Each lander is a check run named yoke/lander on the head it validates, so
// branch protection can require it: in progress while a lander runs (or will
// run again), completed with the verdict yoke recorded, neutral when yoke
// gives up on that head. The plan is a pure function of the store's lander
// runs and what was last written; a check run is written only when that changes.

/** The check's name, as the rulesets yoke prints require it (config/landing.ts). */
export const CHECK_NAME = LANDER_CONTEXT;

/** Check runs of PRs with no lander activity for this long are left as they are. */
const FOLLOW_MS = 14 * 86_400_000;

export interface CheckPlanPolicy {
  landerAttemptsPerHead: number;
  webUrl: string;
}

export interface CheckAction {
  repo: string;
  prNumber: number;
  headSha: string;
  /** The existing check run to update; null: create one. */
  checkRunId: number | null;
  written: string;
  check: CheckRunWrite;
}

const short = (sha: string) => sha.slice(0, 7);

type CheckWrite = { written: string; check: CheckRunWrite };

/** One head's check, as its parts are computed once: the runs at it, the last one, and how a run's base is said. */
interface HeadChecks {
  runs: readonly Run[];
  last: Run;
  head: string;
  base: Pick<CheckRunWrite, 'name' | 'externalId' | 'detailsUrl'>;
  policy: CheckPlanPolicy;
  on: (r: Run) => string;
}

/** The check of a head a lander judged: TR14's wait and hold for an accept, else its verdict (LD06: flaky when it reversed). */
function judgedCheck(
  h: HeadChecks,
  judged: Run,
  { hold, record }: { hold: ProtectedHold | null; record: LandingRecord },
): CheckWrite {
  const { last, head, base, policy, on } = h;
  if (judged.verdict === 'accept' && !hold) {
    // TR14: accepted, but until a pass has read what the change touches the check does not say success.
    return {
      written: `in_progress:checking:${judged.id}`,
      check: {
        ...base,
        externalId: judged.id,
        detailsUrl: runUrl(policy.webUrl, judged),
        status: 'in_progress',
        conclusion: null,
        title: `Accepted at ${short(head)}${on(judged)}; checking what it changes`,
        summary: `Lander run \`${judged.id}\` accepted this head. yoke is reading which files it changes: one that touches a protected path waits for a person's approval.`,
      },
    };
  }
  if (judged.verdict === 'accept' && hold && hold.files.length && !hold.approvedBy) {
    // TR14: accepted, but the change touches what yoke trusts: it blocks a required check until a person approves.
    const why = makeRefusal('protected_paths_changed', {
      number: last.prNumber!,
      sha: short(head),
      files: protectedFileList(hold.files),
    });
    return {
      written: `completed:action_required:${judged.id}`,
      check: {
        ...base,
        externalId: judged.id,
        detailsUrl: runUrl(policy.webUrl, judged) ?? `${policy.webUrl}/${last.repo}/pull/${last.prNumber}`,
        status: 'completed',
        conclusion: 'action_required',
        title: `Accepted at ${short(head)}${on(judged)}; a person must approve`,
        summary: `${why.message}\n\nLander run \`${judged.id}\` accepted this head.\n\n**To recover:** ${why.recovery}`,
      },
    };
  }
  const accepted = judged.verdict === 'accept';
  const approved =
    accepted && hold?.approvedBy && hold.files.length
      ? `\n\nIt changes ${protectedFileList(hold.files)}; ${hold.approvedBy} approved this head.`
      : '';
  return {
    written: `completed:${accepted ? 'success' : 'failure'}:${judged.id}${approved ? ':approved' : ''}`,
    check: {
      ...base,
      externalId: judged.id,
      detailsUrl: runUrl(policy.webUrl, judged),
      status: 'completed',
      conclusion: accepted ? 'success' : 'failure',
      // LD06: an accept that reversed a reject of this head says the validation is flaky.
      title: `${accepted ? 'Accepted' : 'Rejected'} at ${short(head)}${on(judged)}${accepted && flippedVerdict(record, judged) ? '; flaky: a reject of this head did not repeat' : ''}`,
      summary: `Lander run \`${judged.id}\` ${accepted ? 'accepted' : 'rejected'} this head${judged.baseSha ? ` merged onto ${short(judged.baseSha)}${judged.stack.length ? ` after ${stackWords(judged.stack)}, the claim PRs ahead of it (LD05)` : ''}, the base it would land on` : ''}.${approved}\n\n${judged.summary?.trim() || '_The lander gave no summary._'}`,
    },
  };
}

/** The check of a head no lander judged (yet): validating, or given up (superseded, or its attempts used up). */
function unjudgedCheck(
  h: HeadChecks,
  { found, since, superseded }: { found: Run | undefined; since: readonly Run[]; superseded: boolean },
): CheckWrite {
  const { runs, last, head, base, policy, on } = h;
  const live = runs.find((r) => r.status === 'live');
  // Attempts on this head since its last verdict (a verdict on an older base ends the count: LD02).
  const attempts = since.length;
  if (!live && (superseded || attempts >= policy.landerAttemptsPerHead)) {
    const why = superseded
      ? {
          message: `The PR moved past ${short(head)} before a lander gave a verdict; yoke validates its newer head instead.`,
          recovery: 'Nothing to do here: see the check run on the newer head.',
        }
      : makeRefusal('lander_attempts_used_up', { repo: last.repo, number: last.prNumber!, sha: head, attempts });
    const outcomes = runs
      .map((r) => `- \`${r.id}\`: ${r.outcome ?? 'ended'}${r.outcomeReason ? ` (${r.outcomeReason})` : ''}`)
      .join('\n');
    return {
      written: `completed:neutral:${last.id}`,
      check: {
        ...base,
        status: 'completed',
        conclusion: 'neutral',
        title: `yoke gave up on ${short(head)}`,
        summary: `${why.message}\n\n${outcomes}\n\nTo recover: ${why.recovery}`,
      },
    };
  }
  const current = live ?? last;
  // Written again once the workflow run is known, so the check links to it while it runs.
  const link = runUrl(policy.webUrl, current);
  return {
    written: `in_progress::${current.id}${link ? ':linked' : ''}`,
    check: {
      ...base,
      externalId: current.id,
      detailsUrl: link,
      status: 'in_progress',
      conclusion: null,
      title: `Validating ${short(head)}${on(current)}`,
      summary: live
        ? `Lander run \`${live.id}\` is validating this head${current.baseSha ? ` merged onto ${short(current.baseSha)}` : ''} (attempt ${attempts} of ${policy.landerAttemptsPerHead}).${found ? ` The base moved since lander run \`${found.id}\` ${found.verdict === 'accept' ? 'accepted' : 'rejected'} it${on(found)}: a verdict counts only for the base it judged.` : ''}`
        : `Lander run \`${last.id}\` ended without a verdict (${last.outcome ?? 'ended'}); yoke tries this head again (attempt ${attempts + 1} of ${policy.landerAttemptsPerHead}).`,
    },
  };
}

/** What the check run of one head should say, from the lander runs at that head (oldest first) and whether the PR has moved past it. */
export function checkFor(
  runs: readonly Run[],
  policy: CheckPlanPolicy,
  /** Whether a newer head superseded these runs' head, the head's protected-path hold, and the landing record. */
  at: { superseded: boolean; hold?: ProtectedHold | null; record?: LandingRecord },
): CheckWrite {
  const { superseded, hold = null, record = { runs, merges: [] } } = at;
  const last = runs.at(-1)!;
  const found = [...runs].reverse().find((r) => r.verdict !== null);
  // LD02: a lander started after the verdict validates the head on a newer base: until it judges, the check is in progress.
  // The landers of this head launched since its last verdict (runs come oldest first).
  const since = found ? runs.slice(runs.indexOf(found) + 1) : runs;
  const revalidating = found && since.some((r) => r.status === 'live');
  const judged = revalidating ? undefined : found;
  const h: HeadChecks = {
    runs,
    last,
    head: last.headSha!,
    base: { name: CHECK_NAME, externalId: last.id, detailsUrl: runUrl(policy.webUrl, last) },
    policy,
    on: (r: Run) =>
      r.baseSha ? ` on ${short(r.baseSha)}${r.stack.length ? ` with ${stackWords(r.stack)} ahead of it` : ''}` : '',
  };
  return judged ? judgedCheck(h, judged, { hold, record }) : unjudgedCheck(h, { found, since, superseded });
}

/** The check run writes the store says are owed: one per lander head whose check says something new. */
export function planCheckRuns(
  landers: readonly Run[],
  records: readonly CheckRecord[],
  policy: CheckPlanPolicy,
  /** The protected-path holds, and each repository's merges (for landers of a stack). */
  seen: { holds?: readonly ProtectedHold[]; merges?: ReadonlyMap<string, readonly Landed[]> } = {},
): CheckAction[] {
  const { holds = [], merges = new Map<string, readonly Landed[]>() } = seen;
  const held = new Map(holds.map((h) => [`${h.repo}#${h.prNumber}@${h.headSha}`, h]));
  const heads = new Map<string, Run[]>();
  const latestHead = new Map<string, string>();
  for (const run of [...landers].sort((a, b) => a.launchedAt - b.launchedAt)) {
    if (run.kind !== 'lander' || run.prNumber === null || !run.headSha) continue;
    const key = `${run.repo}#${run.prNumber}@${run.headSha}`;
    heads.set(key, [...(heads.get(key) ?? []), run]);
    latestHead.set(`${run.repo}#${run.prNumber}`, run.headSha);
  }
  const known = new Map(records.map((r) => [`${r.repo}#${r.prNumber}@${r.headSha}`, r]));
  const out: CheckAction[] = [];
  for (const [key, runs] of heads) {
    const first = runs[0]!;
    const superseded = latestHead.get(`${first.repo}#${first.prNumber}`) !== first.headSha;
    const record = known.get(key);
    // A head superseded before yoke ever wrote its check needs none.
    if (!record && superseded) continue;
    const landing = {
      runs: landers.filter((r) => r.repo === first.repo),
      merges: merges.get(first.repo) ?? [],
    };
    const { written, check } = checkFor(runs, policy, { superseded, hold: held.get(key) ?? null, record: landing });
    if (record?.written !== written)
      out.push({
        repo: first.repo,
        prNumber: first.prNumber!,
        headSha: first.headSha!,
        checkRunId: record?.checkRunId ?? null,
        written,
        check,
      });
    // LD03: the commit yoke built for a lander carries that lander's check too. A ruleset that requires
    // yoke/lander then lets the branch move to it, as GitHub's rule asks: "commits must first be pushed to
    // another ref where the checks pass" (yoke/land/<n>). It says success only as the PR's head check would.
    for (const run of runs.filter((r) => r.landSha && r.landSha !== r.headSha)) {
      const at = `${run.repo}#${run.prNumber}@${run.landSha}`;
      const built = checkFor([run], policy, { superseded: false, hold: held.get(key) ?? null, record: landing });
      if (known.get(at)?.written === built.written) continue;
      out.push({
        repo: run.repo,
        prNumber: run.prNumber!,
        headSha: run.landSha!,
        checkRunId: known.get(at)?.checkRunId ?? null,
        ...built,
      });
    }
  }
  return out;
}

/**
 * Installations that refused a check run write (403: `checks: write` not granted yet). Their writes wait
 * `retryMs` rather than costing a refused request per head every pass; a write that succeeds clears it.
 */
export class CheckRefusals {
  private until = new Map<number, number>();

  constructor(private readonly retryMs: number) {}

  blocked(installationId: number, now: number): boolean {
    return (this.until.get(installationId) ?? 0) > now;
  }

  refused(installationId: number, now: number): void {
    this.until.set(installationId, now + this.retryMs);
  }

  cleared(installationId: number): void {
    this.until.delete(installationId);
  }
}

/** Writes the planned check runs; one that fails is planned again next time. */
export async function syncLanderChecks(deps: Io & { policy: CheckPlanPolicy; refusals: CheckRefusals }): Promise<void> {
  const { store, forge, log, refusals } = deps;
  const landers = await store.runs.listLanders(deps.clock.now() - FOLLOW_MS);
  const merges = new Map<string, Landed[]>();
  for (const repo of new Set(landers.filter((r) => r.stack.length).map((r) => r.repo)))
    merges.set(repo, await store.merges.listForRepo(repo));
  for (const a of planCheckRuns(landers, await store.checkRuns.list(), deps.policy, {
    holds: await store.protectedHolds.list(),
    merges,
  })) {
    const repo = await repoRefOf(store, a.repo);
    if (!repo || refusals.blocked(repo.installationId, deps.clock.now())) continue;
    try {
      const id = a.checkRunId ?? (await forge.createCheckRun(repo, a.headSha, a.check));
      if (a.checkRunId !== null) await forge.updateCheckRun(repo, a.checkRunId, a.check);
      await store.checkRuns.record(
        { repo: a.repo, prNumber: a.prNumber, headSha: a.headSha, checkRunId: id, written: a.written },
        deps.clock.now(),
      );
      refusals.cleared(repo.installationId);
    } catch (err) {
      const e = classifyGitHubError(err);
      if (e.status === 403) refusals.refused(repo.installationId, deps.clock.now());
      log.warn(
        { repo: a.repo, pr: a.prNumber, head: a.headSha, err: e.message },
        e.status === 403
          ? 'the installation refused a check run (is checks: write granted?); tried again later'
          : 'could not write the yoke/lander check run; retried next pass',
      );
    }
  }
}
