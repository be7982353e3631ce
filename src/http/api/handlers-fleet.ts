import { makeRefusal } from '../../kernel/codes/table.js';
import type { Actor } from '../../delivery/context.js';
import type { FleetContext } from '../../fleet/context.js';
import { settleRun } from '../../fleet/money/settle.js';
import { requestLand, requestStart, resetRepo, setAutoLoop, repoStatus } from '../../fleet/runs/controls.js';
import type { NextPass } from '../../fleet/spawn/next-pass.js';
import type { DoctorReport } from '../operator/doctor.js';
import type { Result } from '../../kernel/result.js';
import type { PassReport } from '../../fleet/engine/pass.js';
import { publicRun } from '../../fleet/notices/report.js';
import { buildFleetReport } from '../operator/report.js';
import { grantPush, openClaim, reportRunResult, type RunAuth } from './run-report.js';
import type { JsonHandlers } from './handler.js';
import { sameRepo } from '../../kernel/ids.js';

// The fleet's routes: a run's own reports (its push token, its claim PR, its
// result), the fleet report, runs, and the controls of a repository.

export type FleetRouteName =
  | 'health'
  | 'push'
  | 'claim'
  | 'result'
  | 'fleet'
  | 'runs'
  | 'run'
  | 'settle'
  | 'repoStatus'
  | 'nextPass'
  | 'doctor'
  | 'auto'
  | 'reset'
  | 'start'
  | 'land';

/** What the HTTP edge reads of the fleet: its context, and the reports its routes and pages show. */
export interface FleetViews {
  fleet: FleetContext;
  /** The last pass's report, for the fleet report. */
  lastPass: () => PassReport | null;
  /** The engine's dry run of the next pass, for one repository (`yoke plan`). */
  nextPass: (repo: string) => Promise<Result<NextPass>>;
  /** `yoke doctor`: a repository's set-up, checked. */
  doctor: (repo: string) => Promise<DoctorReport>;
}

const message = (r: Result<string>) =>
  r.ok ? { status: 200, json: { ok: true as const, message: r.value } } : { refusal: r.refusal };

/** Who a request is recorded as made by: a person's login, else `api` (an operator token names no one). */
const requester = (actor: Actor): string => (actor.role === 'person' ? actor.login : 'api');

/** A repository named as GitHub compares names (ACME/Demo is acme/demo), under the name yoke keeps. */
async function keptName(fleet: FleetContext, p: Record<string, string>): Promise<string> {
  const asked = `${p.owner}/${p.name}`;
  return (await fleet.store.repos.find(asked))?.fullName ?? asked;
}

export function fleetHandlers({
  fleet,
  runAuth,
  lastPass,
  nextPass,
  doctor,
}: FleetViews & { runAuth: RunAuth }): JsonHandlers<FleetRouteName> {
  const repoOf = (p: Record<string, string>) => keptName(fleet, p);
  return {
    async health() {
      return { status: 200, json: { ok: true } };
    },
    async push({ params, bearer }) {
      const r = await grantPush(fleet, runAuth, params.run!, bearer);
      return r.ok
        ? { status: 200, json: { token: r.value.token, branch: r.value.branch, expires_at: r.value.expiresAt } }
        : { refusal: r.refusal };
    },
    async claim({ params, bearer, readJson }) {
      const r = await openClaim(fleet, runAuth, { runId: params.run!, bearer, body: await readJson() });
      return r.ok ? { status: 201, json: { number: r.value } } : { refusal: r.refusal };
    },
    async result({ params, bearer, readJson }) {
      const r = await reportRunResult(fleet, runAuth, { runId: params.run!, bearer, body: await readJson() });
      return r.ok ? { status: 200, json: { ok: true, run: publicRun(r.value) } } : { refusal: r.refusal };
    },
    async fleet() {
      return { status: 200, json: await buildFleetReport(fleet, lastPass()) };
    },
    async runs({ query, mayRead }) {
      const { repo, status } = query;
      const listed = (await fleet.store.runs.listAll(1000))
        .filter((r) => !repo || sameRepo(r.repo, repo))
        .filter((r) => status === undefined || (status === 'live' ? r.status === 'live' : r.outcome === status));
      const runs = [];
      for (const r of listed) if (runs.length < 200 && (await mayRead(r.repo))) runs.push(r);
      // BU06: what each issue these runs worked on has cost so far, over all its runs that reported.
      const shown = new Set(runs.flatMap((r) => (r.issueNumber === null ? [] : [`${r.repo}#${r.issueNumber}`])));
      const issues = (await fleet.store.spend.byIssue(0, 10_000)).filter((i) => shown.has(`${i.repo}#${i.issue}`));
      return { status: 200, json: { runs: runs.map(publicRun), issues } };
    },
    async run({ params }) {
      const run = await fleet.store.runs.get(params.run!);
      return run
        ? { status: 200, json: publicRun(run) }
        : { refusal: makeRefusal('run_not_found', { run: params.run! }) };
    },
    // BU02: an operator's, recorded as the credential names them (TR11).
    async settle({ params, body, actor }) {
      return message(await settleRun(fleet, params.run!, body.usd, actor.role === 'person' ? actor.login : 'operator'));
    },
    async repoStatus({ params }) {
      // Plain text: the API's callers are terminals and scripts; `/yoke status` answers in Markdown.
      return message(await repoStatus(fleet, await repoOf(params), 'plain'));
    },
    async nextPass({ params }) {
      const r = await nextPass(await repoOf(params));
      return r.ok ? { status: 200, json: r.value } : { refusal: r.refusal };
    },
    async doctor({ params }) {
      return { status: 200, json: await doctor(await repoOf(params)) };
    },
    async auto({ params, body }) {
      return message(await setAutoLoop(fleet, await repoOf(params), body.enabled));
    },
    async reset({ params }) {
      return message(await resetRepo(fleet, await repoOf(params)));
    },
    // A person's start or land is theirs, by their login; an operator token's is the API's.
    async start({ params, actor }) {
      return message(await requestStart(fleet, await repoOf(params), Number(params.number), { by: requester(actor) }));
    },
    async land({ params, actor }) {
      return message(await requestLand(fleet, await repoOf(params), Number(params.number), requester(actor)));
    },
  };
}
