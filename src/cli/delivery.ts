import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import type { z } from 'zod';
import type { QaWork } from '../delivery/gate/verdicts.js';
import { ROUTE } from '../http/routes.js';
import type { VerdictBody } from '../delivery/gate/verdicts.js';
import { callRoute, CliFailure, commitArg, repoArg, type CliIo, type GlobalOptions } from './client.js';
import { formatDeploymentRun } from './format.js';

/** TR12: how long `yoke qa plan run`'s execution lives without a renewal, and how often it is renewed. */
export const PLAN_RUN_LEASE = { seconds: 120, renewMs: 30_000 } as const;

// Delivery from a terminal: deployment runs, QA cases and plans, deploy stages.
// Cases and deploy commands run here, in the caller's checkout of the pinned
// commit; yoke records what they did.

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

export function registerDeliveryCommands(program: Command, io: CliIo, g: () => GlobalOptions): void {
  registerDeploymentRunCommands(program, io, g);
  registerQaCommands(program, io, g);
  registerDeployCommands(program, io, g);
}

/** `yoke deployment-runs`: create, list, get, remove a member, gate-check a stage. */
function registerDeploymentRunCommands(program: Command, io: CliIo, g: () => GlobalOptions): void {
  const runs = program
    .command('deployment-runs')
    .description('deployment runs: merged work on its way through the stages');
  runs
    .command('create <owner/repo>')
    .description('start a deployment run of the items owed delivery')
    .option('--commit <sha>', 'the commit to pin (default: the default branch head)')
    .option('--items <items>', 'only these items, e.g. APP-12,APP-14')
    .option('--supersedes <run>', 'take over this failed run, on a later commit')
    .option('--creator <login>', 'the GitHub login told about the run (default $YOKE_LOGIN)')
    .option('--json', 'print the run as JSON')
    .action(
      async (
        repo: string,
        o: { commit?: string; items?: string; supersedes?: string; creator?: string; json?: boolean },
      ) => {
        const creator = o.creator ?? io.env.YOKE_LOGIN;
        const view = await callRoute(io, g(), ROUTE.createDeploymentRun, {
          body: {
            repo: repoArg(repo),
            ...(o.commit ? { commit: commitArg('--commit', o.commit) } : {}),
            ...(o.items
              ? {
                  items: o.items
                    .split(',')
                    .map((s) => s.trim())
                    .filter(Boolean),
                }
              : {}),
            ...(o.supersedes ? { supersedes: o.supersedes } : {}),
            ...(creator ? { creator } : {}),
          },
        });
        io.out(o.json ? JSON.stringify(view, null, 2) : formatDeploymentRun(view));
      },
    );
  runs
    .command('list')
    .description('deployment runs, newest first, with where each is')
    .option('--repo <owner/repo>', 'only this repository')
    .option('--json', 'print them as JSON')
    .action(async (o: { repo?: string; json?: boolean }) => {
      const answer = await callRoute(io, g(), ROUTE.deploymentRuns, {
        query: { repo: o.repo === undefined ? undefined : repoArg(o.repo) },
      });
      const list = 'list' in answer ? answer.list : [];
      if (o.json) return io.out(JSON.stringify(list, null, 2));
      if (list.length === 0)
        return io.out(
          `No deployment runs${o.repo ? ` of ${o.repo}` : ''}. Start one with \`yoke deployment-runs create OWNER/REPO\`.`,
        );
      for (const r of list)
        io.out(`${r.id} · ${r.repo} at ${r.commit.slice(0, 12)} · ${r.status}${r.stage ? ` at ${r.stage}` : ''}`);
    });
  runs
    .command('get <run>')
    .description('stages, members, waits with their commands, groups and verdicts')
    .option('--json', 'print the run as JSON')
    .action(async (run: string, o: { json?: boolean }) => {
      const view = await callRoute(io, g(), ROUTE.deploymentRun, { params: { run } });
      io.out(o.json ? JSON.stringify(view, null, 2) : formatDeploymentRun(view));
    });
  runs
    .command('remove <run>')
    .description('take an item out of the run; its delivery stays owed')
    .requiredOption('--item <item>', 'the item, e.g. APP-12')
    .requiredOption('--reason <text>', 'why, for the record')
    .action(async (run: string, o: { item: string; reason: string }) => {
      const view = await callRoute(io, g(), ROUTE.removeMember, {
        params: { run, item: o.item },
        body: { reason: o.reason },
      });
      io.out(`Removed ${o.item} from ${view.id}; its delivery stays owed.`);
    });
  runs
    .command('dispatch <run> <stage>')
    .description('gate-check a QA stage once: who it wakes and what it waits on')
    .option(
      '--driver <id>',
      'dispatch as this driver (the lease holder, while its lease is current); default $YOKE_LOGIN',
    )
    .option('--json', 'print the answer as JSON')
    .action(async (run: string, stage: string, o: { json?: boolean; driver?: string }) => {
      // One gate check: a fresh request id, and the envelope of the run as it stands.
      const view = await callRoute(io, g(), ROUTE.deploymentRun, { params: { run } });
      const envelope = { driver: o.driver ?? io.env.YOKE_LOGIN ?? 'cli', stage, commit: view.commit };
      const a = await callRoute(io, g(), ROUTE.gateCheck, {
        params: { run, stage },
        body: envelope,
        headers: { 'idempotency-key': `cli-${randomUUID()}` },
      });
      if (o.json) return io.out(JSON.stringify(a, null, 2));
      // DX08: past the response limit the check goes on; its result is read back by its request id.
      if (a.state === 'in_flight')
        return io.out(
          `${a.run} ${a.stage}: the gate check ${a.request} is still running; run \`yoke deployment-runs dispatch ${run} ${stage}\` again to see where it stands.`,
        );
      io.out(
        `${a.run} ${a.stage}: ${a.state}${a.nextStage && a.nextStage !== a.stage ? ` → now at ${a.nextStage}` : ''}`,
      );
      for (const w of a.woken)
        io.out(`  woke ${w.recipient} for ${w.subject}: ${w.waits.map((x) => x.code).join(', ')}`);
      for (const w of a.waits) io.out(`  waits: ${w.detail}\n    ${w.command}`);
    });
}

/** `yoke qa`: run or record a case, run a plan, waive a case. */
function registerQaCommands(program: Command, io: CliIo, g: () => GlobalOptions): void {
  const qa = program.command('qa').description('scoped QA of a deployment run');
  const qaCase = qa.command('case').description('one QA case');
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
        await record(io, g(), run, o.stage, {
          ...target,
          case: o.case!,
          result: o.verdict,
          evidence,
          replaces: o.replaces,
          source: 'yoke qa case run',
        });
        return;
      }
      if (found.length === 0)
        throw new CliFailure(
          `${work.subject} has no case ${o.case} to run at ${o.stage}. See \`yoke deployment-runs get ${run}\`.`,
        );
      if (found[0]!.c.manual)
        throw new CliFailure(`Case ${o.case} is manual: record it with --verdict pass|fail --evidence TEXT|@FILE.`);
      checkCheckout(io, work.commit);
      await runCase(io, g(), work, { ...target, plan: found[0]!.plan }, found[0]!.c, o.replaces);
    });
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
        failed = await runPlans(io, g(), run, work, o);
      } finally {
        clearInterval(renew);
        await callRoute(io, g(), ROUTE.endExecution, { params: { run, execution: execution.id } });
      }
      if (failed) throw new CliFailure(`${failed} case(s) did not pass. See \`yoke deployment-runs get ${run}\`.`);
    });
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
function registerDeployCommands(program: Command, io: CliIo, g: () => GlobalOptions): void {
  program
    .command('deploy')
    .description('deploy stages')
    .command('stage')
    .description('one deploy stage')
    .command('run <run> <stage>')
    .description("run a deploy stage's command here, with the run id, stage and pinned commit in its environment")
    .action(async (run: string, stage: string) => {
      const step = await callRoute(io, g(), ROUTE.deploy, { params: { run, stage }, body: { phase: 'start' } });
      if (step.state === 'failed')
        throw new CliFailure(
          `${stage} could not start: ${step.detail}. Fix it and run \`yoke deploy stage run ${run} ${stage}\` again.`,
        );
      if (step.command === null) {
        // DP02: a workflow stage runs on Actions; its outcome is read from GitHub, not reported from here.
        io.out(
          `Deploying ${step.repo} at ${step.commit.slice(0, 12)} to ${stage} on GitHub Actions (${step.workflow}, deployment ${step.deployment?.id}). Follow it: \`yoke watch deploy -- ${run}\`.`,
        );
        return;
      }
      io.out(`Deploying ${step.repo} at ${step.commit.slice(0, 12)} to ${stage}: ${step.command}`);
      const res = await exec(io)(step.command, step.env);
      const outcome = res.code === 0 ? 'succeeded' : 'failed';
      const after = await callRoute(io, g(), ROUTE.deploy, {
        params: { run, stage },
        body: { phase: 'end', outcome, output: res.output + (res.error ? `\n${res.error}` : '') },
      });
      if (outcome === 'failed')
        throw new CliFailure(
          `The ${stage} command failed (exit ${res.code ?? res.error}). Fix it and run \`yoke deploy stage run ${run} ${stage}\` again.\n${res.output.trim().split('\n').slice(-5).join('\n')}`,
        );
      io.out(`${stage} succeeded; the run is ${after.nextStage ? `at ${after.nextStage}` : 'through its last stage'}.`);
    });
}

function exec(io: CliIo) {
  if (!io.exec) throw new CliFailure('This yoke cannot run commands here.');
  return io.exec;
}

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

async function runPlans(io: CliIo, g: GlobalOptions, run: string, work: QaWork, o: QaOpts): Promise<number> {
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
      if ((await runCase(io, g, work, target, c, undefined, 'yoke qa plan run')) !== 'pass') failed++;
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
  run: string,
  stage: string,
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
  target: { item?: string; plan?: string },
  c: QaWork['plans'][number]['cases'][number],
  replaces?: string,
  source: VerdictBody['source'] = 'yoke qa case run',
): Promise<string> {
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
  return record(io, g, work.run, work.stage, {
    ...target,
    case: c.id,
    result,
    evidence,
    ...(replaces ? { replaces } : {}),
    source,
  });
}
