import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import type { z } from 'zod';
import type { QaWork, VerdictBody } from '../delivery/gate/verdicts.js';
import { ROUTE } from '../http/api/routes.js';
import { callRoute, CliFailure, exec, type CliIo, type GlobalOptions } from './client.js';

// `yoke qa` from a terminal: a case run here (or a manual verdict recorded),
// the plans of an item or a shared group run here, a case waived. Cases run in
// the caller's checkout of the pinned commit; yoke records what they did.

/** TR12: how long `yoke qa plan run`'s execution lives without a renewal, and how often it is renewed. */
export const PLAN_RUN_LEASE = { seconds: 120, renewMs: 30_000 } as const;

interface QaOpts {
  item?: string;
  deploymentRunId?: string;
  stage: string;
  plan?: string;
  case?: string;
  replaces?: string;
  verdict?: string;
  evidence?: string;
}

export function registerQaCommands(program: Command, io: CliIo, g: () => GlobalOptions): void {
  const qa = program.command('qa').description('scoped QA of a deployment run');
  registerCaseRun(qa.command('case').description('one QA case'), io, g);
  registerPlanRun(qa, io, g);
  registerWaive(qa, io, g);
}

/** `yoke qa case run`: an automated case run here, or a manual verdict recorded. */
function registerCaseRun(qaCase: Command, io: CliIo, g: () => GlobalOptions): void {
  qaCase
    .command('run')
    .description('run an automated case here, or record a manual one with --verdict and --evidence')
    .option('--item <item>', 'the item whose own plan has the case, e.g. APP-12')
    .option('--deployment-run-id <run>', 'the run (needed for a shared plan; found from --item otherwise)')
    .requiredOption('--stage <stage>', 'the QA stage')
    .option('--plan <plan>', 'the plan (id or name), where the case id is not enough')
    .requiredOption('--case <case>', 'the case id')
    .option('--replaces <case>', 'this case is the correction of that one (QA06)')
    .option('--verdict <pass|fail>', 'record a manual verdict instead of running the case')
    .option('--evidence <text|@file>', 'what shows the verdict; @path reads a file')
    .action(async (o: QaOpts) => {
      const run = await runOf(io, g(), o);
      const work = await workOf(io, g(), run, o);
      const found = work.plans
        .flatMap((p) => p.cases.map((c) => ({ plan: p.planId, c })))
        .filter((x) => x.c.id === o.case);
      const target = {
        ...(o.item ? { item: o.item } : {}),
        ...(o.plan || !o.item ? { plan: o.plan ?? found[0]?.plan } : {}),
      };
      if (o.verdict !== undefined) {
        if (o.verdict !== 'pass' && o.verdict !== 'fail') throw new CliFailure('Say --verdict pass or --verdict fail.');
        const evidence = o.evidence?.startsWith('@') ? readEvidence(io, o.evidence.slice(1)) : o.evidence;
        await record(
          io,
          g(),
          { run, stage: o.stage },
          {
            ...target,
            case: o.case!,
            result: o.verdict,
            evidence,
            replaces: o.replaces,
            source: 'yoke qa case run',
          },
        );
        return;
      }
      if (found.length === 0)
        throw new CliFailure(
          `${work.subject} has no case ${o.case} to run at ${o.stage}. See \`yoke deployment-runs get ${run}\`.`,
        );
      if (found[0]!.c.manual)
        throw new CliFailure(`Case ${o.case} is manual: record it with --verdict pass|fail --evidence TEXT|@FILE.`);
      checkCheckout(io, work.commit);
      await runCase(io, g(), work, {
        target: { ...target, plan: found[0]!.plan },
        c: found[0]!.c,
        replaces: o.replaces,
      });
    });
}

/** `yoke qa plan run`: the plans of an item, or a shared group, run here under a renewed execution lease. */
function registerPlanRun(qa: Command, io: CliIo, g: () => GlobalOptions): void {
  qa.command('plan')
    .description('a QA plan')
    .command('run')
    .description(
      "run a member's own plans (--item) or a run's open shared group (--deployment-run-id with --plan), here",
    )
    .option('--item <item>', 'the member, e.g. APP-12')
    .option('--deployment-run-id <run>', 'the run; with --plan, its open group of that plan')
    .requiredOption('--stage <stage>', 'the QA stage')
    .option('--plan <plan>', 'the plan (id or name)')
    .action(async (o: QaOpts) => {
      if (!o.item && !(o.deploymentRunId && o.plan))
        throw new CliFailure('Name --item PREFIX-N, or --deployment-run-id RUN with --plan PLAN.');
      const run = await runOf(io, g(), o);
      const work = await workOf(io, g(), run, o);
      checkCheckout(io, work.commit);
      // The run is an execution: on a shared group it defers close-out and notices until it ends (DX05).
      // TR12: it lives while this command renews it, so a Ctrl-C or a lost answer leaves nothing that blocks the run.
      const body = {
        ...(o.item ? { item: o.item, ...(o.plan ? { plan: o.plan } : {}) } : { plan: o.plan! }),
        lease_seconds: PLAN_RUN_LEASE.seconds,
      };
      const execution = await callRoute(io, g(), ROUTE.startExecution, {
        params: { run, stage: o.stage },
        body,
        headers: { 'idempotency-key': `plan-run-${randomUUID()}` },
      });
      const renew = setInterval(
        () =>
          void callRoute(io, g(), ROUTE.renewExecution, {
            params: { run, execution: execution.id },
            body: { lease_seconds: PLAN_RUN_LEASE.seconds },
          }).catch(() => {}),
        PLAN_RUN_LEASE.renewMs,
      );
      renew.unref();
      let failed = 0;
      try {
        failed = await runPlans(io, g(), work, o);
      } finally {
        clearInterval(renew);
        await callRoute(io, g(), ROUTE.endExecution, { params: { run, execution: execution.id } });
      }
      if (failed) throw new CliFailure(`${failed} case(s) did not pass. See \`yoke deployment-runs get ${run}\`.`);
    });
}

/** `yoke qa waive`: a maintainer waives a case, with the reason. */
function registerWaive(qa: Command, io: CliIo, g: () => GlobalOptions): void {
  qa.command('waive')
    .description('discharge a failed case (maintainers): the run goes on without it')
    .requiredOption('--deployment-run-id <run>', 'the run')
    .requiredOption('--stage <stage>', 'the QA stage')
    .requiredOption('--plan <plan>', 'the plan')
    .requiredOption('--case <case>', 'the case')
    .option('--item <item>', "for a member's own plan, the member")
    .requiredOption('--reason <text>', 'why it may be waived')
    .action(async (o: QaOpts & { reason: string }) => {
      await callRoute(io, g(), ROUTE.waive, {
        params: { run: o.deploymentRunId!, stage: o.stage },
        body: { plan: o.plan!, case: o.case!, reason: o.reason, ...(o.item ? { item: o.item } : {}) },
      });
      io.out(`Waived ${o.plan}/${o.case} in ${o.deploymentRunId} at ${o.stage}.`);
    });
}

/** `yoke deploy stage run`: a deploy stage's command, here. */
function readEvidence(io: CliIo, path: string): string {
  try {
    return (
      io.readFile ??
      (() => {
        throw new Error('no file access');
      })
    )(path);
  } catch (err) {
    throw new CliFailure(`Cannot read the evidence file ${path}: ${err instanceof Error ? err.message : err}`);
  }
}

/** Cases run against the pinned commit: a checkout of another commit would record verdicts for code the run does not ship. */
/** Cases run here judge the pinned commit, so here must be a checkout of exactly it; nothing is run or recorded otherwise. */
function checkCheckout(io: CliIo, commit: string): void {
  const head = io.head?.() ?? null;
  if (head === null)
    throw new CliFailure(
      `This directory is not a git checkout, so nothing here is the run's pinned commit ${commit.slice(0, 12)}.\nTo recover: run it in a clone of the repository, at git checkout ${commit}`,
    );
  if (head !== commit)
    throw new CliFailure(
      `This checkout is at ${head.slice(0, 12)}, but the run is pinned at ${commit.slice(0, 12)}.\nTo recover: git checkout ${commit}`,
    );
}

async function runPlans(io: CliIo, g: GlobalOptions, work: QaWork, o: QaOpts): Promise<number> {
  const { run } = work;
  let failed = 0;
  for (const p of work.plans) {
    for (const c of p.cases) {
      if (c.passed) continue;
      if (c.manual) {
        io.out(
          `${p.planId}/${c.id} is manual: yoke qa case run ${o.item ? `--item ${o.item}` : `--deployment-run-id ${run} --plan ${p.planId}`} --stage ${o.stage} --case ${c.id} --verdict pass --evidence @FILE`,
        );
        continue;
      }
      const target = o.item ? { item: o.item, plan: p.planId } : { plan: p.planId };
      if ((await runCase(io, g, work, { target, c, source: 'yoke qa plan run' })) !== 'pass') failed++;
    }
  }
  return failed;
}

async function runOf(io: CliIo, g: GlobalOptions, o: QaOpts): Promise<string> {
  if (o.deploymentRunId) return o.deploymentRunId;
  if (!o.item) throw new CliFailure('Name --item PREFIX-N or --deployment-run-id RUN.');
  const answer = await callRoute(io, g, ROUTE.deploymentRuns, { query: { item: o.item } });
  const found = { runs: 'runs' in answer ? answer.runs : [] };
  if (found.runs.length !== 1)
    throw new CliFailure(
      found.runs.length
        ? `${o.item} is in several active runs (${found.runs.join(', ')}); add --deployment-run-id.`
        : `${o.item} is not a member of an active deployment run. See \`yoke deployment-runs create\`.`,
    );
  return found.runs[0]!;
}

async function workOf(io: CliIo, g: GlobalOptions, run: string, o: QaOpts): Promise<QaWork> {
  const query = o.item ? { item: o.item, plan: o.plan } : { plan: o.plan ?? '' };
  return callRoute(io, g, ROUTE.qaWork, { params: { run, stage: o.stage }, query });
}

async function record(
  io: CliIo,
  g: GlobalOptions,
  { run, stage }: { run: string; stage: string },
  body: z.input<typeof VerdictBody>,
): Promise<string> {
  // TR11: who records it is the token's own identity (a person token records as its login), never a name sent along.
  const v = await callRoute(io, g, ROUTE.verdict, { params: { run, stage }, body });
  io.out(`${v.subject} ${v.plan}/${v.case}: ${v.result}`);
  return v.result;
}

async function runCase(
  io: CliIo,
  g: GlobalOptions,
  work: QaWork,
  the: {
    target: { item?: string; plan?: string };
    c: QaWork['plans'][number]['cases'][number];
    replaces?: string | undefined;
    source?: VerdictBody['source'];
  },
): Promise<string> {
  const { target, c, replaces, source = 'yoke qa case run' } = the;
  const env = {
    YOKE_DEPLOYMENT_RUN_ID: work.run,
    YOKE_STAGE: work.stage,
    YOKE_COMMIT: work.commit,
    YOKE_REPO: work.repo,
    YOKE_QA_CASE: c.id,
  };
  const res = await exec(io)(c.run!, env);
  const result = res.error ? 'error' : res.code === 0 ? 'pass' : 'fail';
  const evidence = `$ ${c.run}\n${res.output}${res.error ? `\n${res.error}` : ''}\n(exit ${res.code ?? 'none'})`.slice(
    -16_000,
  );
  return record(
    io,
    g,
    { run: work.run, stage: work.stage },
    {
      ...target,
      case: c.id,
      result,
      evidence,
      ...(replaces ? { replaces } : {}),
      source,
    },
  );
}
