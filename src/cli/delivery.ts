import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { ROUTE } from '../http/api/routes.js';
import { callRoute, CliFailure, exec, newRunOptions, repoArg, type CliIo, type GlobalOptions } from './client.js';
import { formatDeploymentRun } from './format.js';
import { registerQaCommands } from './qa.js';

// Delivery from a terminal: deployment runs, QA cases and plans, deploy stages.
// Cases and deploy commands run here, in the caller's checkout of the pinned
// commit; yoke records what they did.

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
  registerCreate(runs, io, g);
  registerListGetRemove(runs, io, g);
  registerDispatch(runs, io, g);
}

/** `yoke deployment-runs create`: a run of the items owed delivery. */
function registerCreate(runs: Command, io: CliIo, g: () => GlobalOptions): void {
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
          body: { repo: repoArg(repo), ...newRunOptions(o, creator) },
        });
        io.out(o.json ? JSON.stringify(view, null, 2) : formatDeploymentRun(view));
      },
    );
}

/** `yoke deployment-runs list`, `get` and `remove`. */
function registerListGetRemove(runs: Command, io: CliIo, g: () => GlobalOptions): void {
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
}

/** `yoke deployment-runs dispatch`: a gate check of a stage, idempotent under its request id. */
function registerDispatch(runs: Command, io: CliIo, g: () => GlobalOptions): void {
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
