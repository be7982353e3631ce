import { keysOf } from '../kernel/guards.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AGENTS } from '../agent/registry.js';
import type { AgentName } from '../agent/adapter.js';
import { parseAppYml, readShippedAppYml } from '../config/app-yml.js';
import { parseDeliverySettings } from '../config/delivery.js';
import type { RepoConfigResult } from '../config/repo-config.js';
import { gatedStages } from '../delivery/deployments/environment-check.js';
import { deployBranchOf } from '../delivery/deployments/stage-deployment.js';
import type { BranchPolicy, EnvironmentRules, Forge, InstallationGrants, RepoRef } from '../forge/types.js';
import { makeRefusal } from '../kernel/codes/table.js';
import { globToRegExp } from '../kernel/glob.js';
import { errorText } from '../kernel/error-text.js';
import { sameRepo } from '../kernel/ids.js';

// `yoke doctor OWNER/REPO`: a preflight from the running server. It reads
// what GitHub holds of a repository's set-up (the installation's grants, the
// workflow on the default branch, the secrets' names, the environments) and
// whether yoke's public URL serves its runner; then judges, purely, each
// check with the setting that fixes it.

export type DoctorCheckName =
  'installed' | 'permissions' | 'events' | 'opt_in' | 'workflow' | 'secret' | 'public_url' | 'environments';

export interface DoctorCheck {
  check: DoctorCheckName;
  /** ok, failed (with the fix), or not needed here (said why). */
  state: 'ok' | 'failed' | 'skipped';
  text: string;
  fix: string | null;
}

export interface DoctorReport {
  repo: string;
  ok: boolean;
  checks: DoctorCheck[];
}

/** The workflows yoke ships: one per agent it knows, and `own` for an agent of the repository's own (run.sh). */
export type ShippedWorkflow = AgentName | 'own';

/** What this yoke ships and expects: app.yml's permissions and events, and each workflow. */
export interface ShippedSetup {
  permissions: Record<string, string>;
  events: string[];
  workflows: Record<ShippedWorkflow, string>;
}

const SECRET_LINE = /^\s+(YOKE_AGENT_SECRETS: .*|[A-Z][A-Z0-9_]*: \$\{\{ secrets\.[A-Za-z0-9_]+ \}\})$/;

/**
 * A workflow as yoke depends on it: without comments, blank lines and the
 * agent's secrets (which the `own` workflow asks you to add), so a file that
 * differs only there is still the one yoke ships.
 */
export function workflowShape(text: string): string {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.trim().startsWith('#') && !SECRET_LINE.test(l))
    .join('\n');
}

/** The secrets an `own` workflow names for its agent (YOKE_AGENT_SECRETS, comma-separated). */
export function ownAgentSecrets(text: string): string[] {
  const m = /^\s+YOKE_AGENT_SECRETS:\s*"?([^"\n]*)"?\s*$/m.exec(text);
  return (m?.[1] ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

/** Reads app.yml and the agents' workflow templates from yoke's own files (a checkout's or the package's). */
export function loadShippedSetup(): ShippedSetup {
  const read = (rel: string) => readFileSync(new URL(`../../${rel}`, import.meta.url), 'utf8');
  const manifest = parseAppYml(readShippedAppYml());
  const workflows: Record<ShippedWorkflow, string> = {
    'claude-code': read('templates/agents/claude-code.yml'),
    codex: read('templates/agents/codex.yml'),
    own: read('templates/yoke-run.yml'),
  };
  return { permissions: manifest.default_permissions, events: manifest.default_events, workflows };
}

/** What the runner fetch by the public URL found. */
export type RunnerProbe = { ok: true; status: number; sha256: string | null } | { ok: false; error: string };

export interface DoctorFacts {
  repo: string;
  installation: InstallationGrants | null;
  config: RepoConfigResult | null;
  /** The workflow file's name (the opt-in's launcher.workflow) and its text on the default branch (null: not there). */
  workflow: { name: string; text: string | null } | null;
  /** The secrets' names, or why they could not be listed. */
  secrets: string[] | { error: string } | null;
  /** How runs start: only the actions launcher needs the workflow, the secret and the public URL. */
  launcher: 'actions' | 'command';
  /** With `github`, runs call no URL of yoke's (YOKE_RUNS_REACH). */
  runsReach?: 'api' | 'github';
  publicUrl: string;
  runner: { probe: RunnerProbe; expectedSha256: string } | null;
  environments: { stage: string; environment: string; rules: EnvironmentRules; policy: BranchPolicy | null }[];
  appSlug: string;
}

const RANK: Record<string, number> = { none: 0, read: 1, write: 2, admin: 3 };

/** Pure: every check, from what was read. */
export function judgeDoctor(f: DoctorFacts, shipped: ShippedSetup): DoctorReport {
  const checks: DoctorCheck[] = [];
  const add = (check: DoctorCheckName, state: DoctorCheck['state'], text: string, fix: string | null = null) =>
    checks.push({ check, state, text, fix });
  if (!f.installation) {
    const r = makeRefusal('repo_not_installed', { repo: f.repo });
    add('installed', 'failed', r.message, r.recovery);
    return { repo: f.repo, ok: false, checks };
  }
  add('installed', 'ok', `yoke's app is installed on ${f.repo} (installation ${f.installation.id}).`);

  const short = Object.entries(shipped.permissions).filter(
    ([k, v]) => (RANK[f.installation!.permissions[k] ?? 'none'] ?? 0) < (RANK[v] ?? 0),
  );
  if (short.length === 0) add('permissions', 'ok', 'The installation grants every permission app.yml asks for.');
  else
    add(
      'permissions',
      'failed',
      `The installation grants less than app.yml asks for: ${short.map(([k, v]) => `${k} (asks ${v}, grants ${f.installation!.permissions[k] ?? 'none'})`).join(', ')}.`,
      `Give the app these permissions: on GitHub, the app's settings, Permissions & events, set ${short.map(([k, v]) => `${k} to ${v === 'read' ? 'Read-only' : 'Read and write'}`).join(', ')} and save; then an owner of ${f.repo.split('/')[0]} accepts the new permissions on the installation (Settings, GitHub Apps, Configure).`,
    );
  const missing = shipped.events.filter((e) => !f.installation!.events.includes(e));
  if (missing.length === 0) add('events', 'ok', 'The installation receives every event app.yml asks for.');
  else
    add(
      'events',
      'failed',
      `The installation does not receive ${missing.join(', ')}: yoke would hear of those changes only when it next polls, and never of a deployment protection request.`,
      `Subscribe the app to them: on GitHub, the app's settings, Permissions & events, Subscribe to events, tick ${missing.join(', ')} and save; then accept the change on the installation.`,
    );

  const cfg = f.config;
  if (!cfg || cfg.state === 'absent')
    add(
      'opt_in',
      'failed',
      `${f.repo} has no .github/yoke.yml on its default branch, so yoke does nothing there.`,
      'Run `yoke init --agent claude-code` (or codex) in a checkout, then commit and push what it writes.',
    );
  else if (cfg.state === 'invalid')
    add('opt_in', 'failed', cfg.reason, '`yoke config check .` in a checkout says the same offline; fix it and push.');
  else add('opt_in', 'ok', '.github/yoke.yml is valid.');

  const actions = f.launcher === 'actions';
  const notNeeded = 'Not needed: this yoke starts runs with its command launcher (YOKE_LAUNCHER=command).';
  let shape: ShippedWorkflow | null = null;
  if (!actions) add('workflow', 'skipped', notNeeded);
  else if (!f.workflow || f.workflow.text === null) {
    const path = `.github/workflows/${f.workflow?.name ?? 'yoke-run.yml'}`;
    add(
      'workflow',
      'failed',
      `${path} is not on the default branch, so yoke cannot start a run there.`,
      '`yoke init --agent claude-code` (or codex) writes it; commit and push it to the default branch.',
    );
  } else {
    const path = `.github/workflows/${f.workflow.name}`;
    const mine = workflowShape(f.workflow.text);
    shape = keysOf(shipped.workflows).find((w) => workflowShape(shipped.workflows[w]) === mine) ?? null;
    if (shape)
      add(
        'workflow',
        'ok',
        `${path} is the workflow this yoke ships ${shape === 'own' ? 'for an agent of your own (.github/yoke/run.sh)' : `for ${shape}`}.`,
      );
    else
      add(
        'workflow',
        'failed',
        `${path} is not a workflow this yoke ships (for claude-code, for codex, or for an agent of your own): the runs yoke dispatches may not start, or not contained as yoke expects.`,
        "Move yours aside and run `yoke init --agent claude-code` (or codex) again, which writes this version's; then commit and push it.",
      );
  }

  if (!actions) add('secret', 'skipped', notNeeded);
  else {
    const wanted =
      shape === 'own'
        ? ownAgentSecrets(f.workflow!.text!)
        : shape
          ? [...AGENTS[shape].credentials]
          : [...new Set(Object.values(AGENTS).flatMap((a) => a.credentials))];
    const who = shape === 'own' ? "your agent's" : shape ? `${shape}'s` : "an agent's";
    const listed = Array.isArray(f.secrets) ? f.secrets : null;
    if (shape === 'own' && wanted.length === 0)
      add('secret', 'skipped', 'Your agent names no secret (YOKE_AGENT_SECRETS is empty in the workflow).');
    else if (!listed)
      add(
        'secret',
        'failed',
        `yoke could not list ${f.repo}'s Actions secrets${f.secrets && !Array.isArray(f.secrets) ? `: ${f.secrets.error}` : ''}.`,
        'Give the app the Secrets permission (Read-only: it lists names, never values), as app.yml asks, and accept it on the installation.',
      );
    else if (shape === 'own' ? wanted.every((w) => listed.includes(w)) : wanted.some((w) => listed.includes(w)))
      add('secret', 'ok', `${who} secret is set (${wanted.filter((w) => listed.includes(w)).join(', ')}).`);
    else {
      const absent = shape === 'own' ? wanted.filter((w) => !listed.includes(w)) : wanted;
      add(
        'secret',
        'failed',
        `${who} secret is not set: ${shape === 'own' ? absent.join(', ') : `none of ${absent.join(', ')}`} ${absent.length === 1 || shape !== 'own' ? 'is' : 'are'} among ${f.repo}'s Actions secrets.`,
        `Add the repository secret ${absent[0]}: Settings, Secrets and variables, Actions, New repository secret.`,
      );
    }
  }

  if (!actions) add('public_url', 'skipped', notNeeded);
  else if (f.runsReach === 'github')
    add(
      'public_url',
      'skipped',
      'Not needed: runs reach this yoke through GitHub (YOKE_RUNS_REACH=github): they fetch the runner from refs/yoke/runner/<sha256> in the repository and hand their results back as workflow artifacts.',
    );
  else {
    const url = `${f.publicUrl}/yoke/runner.mjs`;
    const fix = `Set YOKE_PUBLIC_URL to the https address at which GitHub's runners reach this yoke (the app's webhook URL without /api/github/webhooks), and make sure ${url} answers there.`;
    const probe = f.runner?.probe;
    if (!probe || !probe.ok) add('public_url', 'failed', `${url} did not answer: ${probe?.error ?? 'not asked'}.`, fix);
    else if (probe.status !== 200)
      add('public_url', 'failed', `${url} answered ${probe.status}, not yoke's runner.`, fix);
    else if (probe.sha256 !== f.runner!.expectedSha256)
      add(
        'public_url',
        'failed',
        `${url} serves another runner than this yoke's: another server answers at YOKE_PUBLIC_URL.`,
        fix,
      );
    else add('public_url', 'ok', `${url} serves this yoke's runner.`);
  }

  if (f.environments.length === 0)
    add('environments', 'skipped', "No deploy stage follows a QA stage, so no environment waits on yoke's rule.");
  else {
    const sample = deployBranchOf('dr-1');
    const problems: { text: string; fix: string }[] = [];
    for (const e of f.environments) {
      const p = { repo: f.repo, stage: e.stage, environment: e.environment, app: f.appSlug };
      if (!e.rules.exists) {
        const r = makeRefusal('environment_missing', p);
        problems.push({ text: r.message, fix: r.recovery });
        continue;
      }
      if (!e.rules.ruleApps.includes(f.appSlug)) {
        const r = makeRefusal('environment_rule_missing', p);
        problems.push({ text: r.message, fix: r.recovery });
      }
      const policy = e.policy ?? { kind: 'all' as const };
      const allowed =
        policy.kind === 'all' ||
        (policy.kind === 'custom' && policy.branches.some((b) => globToRegExp(b).test(sample)));
      if (!allowed)
        problems.push({
          text: `Environment ${e.environment} deploys only from ${policy.kind === 'custom' ? `the branches ${policy.branches.join(', ') || '(none listed)'}` : 'protected branches'}, and yoke deploys from yoke/deploy/* branches.`,
          fix: `Settings, Environments, \`${e.environment}\`, Deployment branches and tags: choose Selected branches and tags and add the rule \`yoke/deploy/*\`.`,
        });
    }
    if (problems.length === 0)
      add(
        'environments',
        'ok',
        `${f.environments.map((e) => e.environment).join(', ')} ${f.environments.length === 1 ? "has yoke's protection rule and lets" : "have yoke's protection rule and let"} yoke/deploy/* branches deploy.`,
      );
    else add('environments', 'failed', problems.map((p) => p.text).join(' '), problems.map((p) => p.fix).join(' '));
  }
  return { repo: f.repo, ok: checks.every((c) => c.state !== 'failed'), checks };
}

/** `yoke doctor`'s text: the verdict, then each check, each failed one with its fix. */
export function doctorText(r: DoctorReport): string {
  const failed = r.checks.filter((c) => c.state === 'failed').length;
  return [
    r.ok
      ? `${r.repo} is set up for yoke: every check passed.`
      : `${r.repo} is not set up for yoke yet: ${failed} of ${r.checks.length} checks failed.`,
    ...r.checks.flatMap((c) => [
      `${c.state === 'failed' ? 'FAILED' : c.state}: ${c.check}: ${c.text}`,
      ...(c.fix ? [`  fix: ${c.fix}`] : []),
    ]),
  ].join('\n');
}

export interface DoctorDeps {
  forge: Forge;
  launcher: 'actions' | 'command';
  /** YOKE_RUNS_REACH: with `github`, runs call no URL of yoke's, so none is checked. */
  runsReach?: 'api' | 'github';
  publicUrl: string;
  configRefreshMs: number;
  /** Fetches this yoke's runner by its public URL. */
  probeRunner: (url: string) => Promise<RunnerProbe>;
  /** The sha256 of the runner this yoke serves and sends with each dispatch. */
  runnerSha256: () => Promise<string>;
}

/** Reads what the checks need (through the forge, and the runner by the public URL), then judges. */
export async function runDoctor(deps: DoctorDeps, shipped: ShippedSetup, name: string): Promise<DoctorReport> {
  const { forge } = deps;
  const appSlug = (await forge.botLogin()).replace(/\[bot\]$/, '');
  let ref: RepoRef | null = null;
  for (const id of await forge.listInstallations()) {
    ref = (await forge.listRepos(id)).find((r) => sameRepo(r.fullName, name)) ?? null;
    if (ref) break;
  }
  const base: DoctorFacts = {
    repo: ref?.fullName ?? name,
    installation: null,
    config: null,
    workflow: null,
    secrets: null,
    launcher: deps.launcher,
    ...(deps.runsReach ? { runsReach: deps.runsReach } : {}),
    publicUrl: deps.publicUrl,
    runner: null,
    environments: [],
    appSlug,
  };
  if (!ref) return judgeDoctor(base, shipped);
  const installation = await forge.readInstallation(ref);
  if (!installation) return judgeDoctor(base, shipped);
  forge.invalidate(ref.fullName);
  const config = await forge.readConfig(ref, { maxAgeMs: deps.configRefreshMs });
  const actions = deps.launcher === 'actions';
  const name_ = config.state === 'valid' ? config.config.launcher.workflow : 'yoke-run.yml';
  const head = actions ? await forge.resolveCommit(ref, 'HEAD') : null;
  const workflow = actions
    ? { name: name_, text: head ? await forge.readFileAt(ref, `.github/workflows/${name_}`, head) : null }
    : null;
  const secrets = actions
    ? await forge.listSecretNames(ref).catch((err: unknown) => ({ error: errorText(err) }))
    : null;
  const runner =
    actions && deps.runsReach !== 'github'
      ? {
          probe: await deps.probeRunner(`${deps.publicUrl}/yoke/runner.mjs`),
          expectedSha256: await deps.runnerSha256(),
        }
      : null;
  const delivery =
    config.state === 'valid'
      ? parseDeliverySettings(ref.fullName, config.config.delivery)
      : { state: 'absent' as const };
  const environments: DoctorFacts['environments'] = [];
  if (delivery.state === 'valid')
    for (const g of gatedStages(delivery.settings))
      environments.push({
        ...g,
        rules: await forge.readEnvironmentRules(ref, g.environment),
        policy: await forge.readBranchPolicy(ref, g.environment),
      });
  return judgeDoctor({ ...base, installation, config, workflow, secrets, runner, environments }, shipped);
}

/** The runner fetched as a workflow job fetches it: its status and the sha256 of what came back. */
export async function fetchRunnerProbe(url: string, fetchFn: typeof fetch = fetch): Promise<RunnerProbe> {
  try {
    const res = await fetchFn(url, { signal: AbortSignal.timeout(10_000), redirect: 'error' });
    const body = Buffer.from(await res.arrayBuffer());
    return { ok: true, status: res.status, sha256: createHash('sha256').update(body).digest('hex') };
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : null;
    return { ok: false, error: cause ?? errorText(err) };
  }
}
