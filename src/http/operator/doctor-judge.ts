import { keysOf } from '../../kernel/guards.js';
import { AGENTS } from '../../agent/clis/registry.js';
import type { AgentName } from '../../agent/clis/adapter.js';
import type { RepoConfigResult } from '../../config/repo-config.js';
import { deployBranchOf } from '../../delivery/deployments/stage-deployment.js';
import type { BranchPolicy, EnvironmentRules, InstallationGrants } from '../../forge/types.js';
import { makeRefusal } from '../../kernel/codes/table.js';
import { globToRegExp } from '../../kernel/glob.js';
import { judgeLanding, type LandingFacts } from './doctor-landing.js';
import { judgeReading, type ReadingFacts } from './doctor-reading.js';

// `yoke doctor`'s judgement, pure: what was read of a repository's set-up in,
// each check with the setting that fixes it out (the reads: doctor.ts).

/** `yoke doctor`'s checks, in the order it reports them (the API's answer names them from here). */
export const DOCTOR_CHECKS = [
  'installed',
  'reading',
  'permissions',
  'events',
  'opt_in',
  'landing',
  'workflow',
  'secret',
  'public_url',
  'environments',
] as const;
export type DoctorCheckName = (typeof DOCTOR_CHECKS)[number];

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
  /** This yoke's App ID (APP_ID), the source yoke/lander must come from; null when unset. */
  appId: number | null;
  /** The opt-in file's way of landing and the default branch's rules; null without a valid opt-in file. */
  landing: LandingFacts | null;
  /** Who reads the installation, and the spread of the reading; null when the store was not asked. */
  reading: ReadingFacts | null;
}

const RANK: Record<string, number> = { none: 0, read: 1, write: 2, admin: 3 };

type Judged = Pick<DoctorCheck, 'state' | 'text' | 'fix'>;
const passed = (text: string): Judged => ({ state: 'ok', text, fix: null });
const failed = (text: string, fix: string): Judged => ({ state: 'failed', text, fix });
const skipped = (text: string): Judged => ({ state: 'skipped', text, fix: null });

const NOT_NEEDED = 'Not needed: this yoke starts runs with its command launcher (YOKE_LAUNCHER=command).';

/** What the installation grants and receives, against what app.yml asks for. */
function grantChecks(repo: string, installation: InstallationGrants, shipped: ShippedSetup): [Judged, Judged] {
  const short = Object.entries(shipped.permissions).filter(
    ([k, v]) => (RANK[installation.permissions[k] ?? 'none'] ?? 0) < (RANK[v] ?? 0),
  );
  const permissions =
    short.length === 0
      ? passed('The installation grants every permission app.yml asks for.')
      : failed(
          `The installation grants less than app.yml asks for: ${short.map(([k, v]) => `${k} (asks ${v}, grants ${installation.permissions[k] ?? 'none'})`).join(', ')}.`,
          `Give the app these permissions: on GitHub, the app's settings, Permissions & events, set ${short.map(([k, v]) => `${k} to ${v === 'read' ? 'Read-only' : 'Read and write'}`).join(', ')} and save; then an owner of ${repo.split('/')[0]} accepts the new permissions on the installation (Settings, GitHub Apps, Configure).`,
        );
  const missing = shipped.events.filter((e) => !installation.events.includes(e));
  const events =
    missing.length === 0
      ? passed('The installation receives every event app.yml asks for.')
      : failed(
          `The installation does not receive ${missing.join(', ')}: yoke would hear of those changes only when it next polls, and never of a deployment protection request.`,
          `Subscribe the app to them: on GitHub, the app's settings, Permissions & events, Subscribe to events, tick ${missing.join(', ')} and save; then accept the change on the installation.`,
        );
  return [permissions, events];
}

function optInCheck(f: DoctorFacts): Judged {
  const cfg = f.config;
  if (!cfg || cfg.state === 'absent')
    return failed(
      `${f.repo} has no .github/yoke.yml on its default branch, so yoke does nothing there.`,
      'Run `yoke init --agent claude-code` (or codex) in a checkout, then commit and push what it writes.',
    );
  if (cfg.state === 'invalid')
    return failed(cfg.reason, '`yoke config check .` in a checkout says the same offline; fix it and push.');
  return passed('.github/yoke.yml is valid.');
}

/** The workflow on the default branch, and which shipped one it is (null: none of them). */
function workflowCheck(f: DoctorFacts, shipped: ShippedSetup): { judged: Judged; shape: ShippedWorkflow | null } {
  if (f.launcher !== 'actions') return { judged: skipped(NOT_NEEDED), shape: null };
  if (!f.workflow || f.workflow.text === null) {
    const path = `.github/workflows/${f.workflow?.name ?? 'yoke-run.yml'}`;
    return {
      judged: failed(
        `${path} is not on the default branch, so yoke cannot start a run there.`,
        '`yoke init --agent claude-code` (or codex) writes it; commit and push it to the default branch.',
      ),
      shape: null,
    };
  }
  const path = `.github/workflows/${f.workflow.name}`;
  const mine = workflowShape(f.workflow.text);
  const shape = keysOf(shipped.workflows).find((w) => workflowShape(shipped.workflows[w]) === mine) ?? null;
  if (shape)
    return {
      judged: passed(
        `${path} is the workflow this yoke ships ${shape === 'own' ? 'for an agent of your own (.github/yoke/run.sh)' : `for ${shape}`}.`,
      ),
      shape,
    };
  return {
    judged: failed(
      `${path} is not a workflow this yoke ships (for claude-code, for codex, or for an agent of your own): the runs yoke dispatches may not start, or not contained as yoke expects.`,
      "Move yours aside and run `yoke init --agent claude-code` (or codex) again, which writes this version's; then commit and push it.",
    ),
    shape,
  };
}

/** The agent's secret among the repository's Actions secrets: the one the workflow's agent needs. */
function secretCheck(f: DoctorFacts, shape: ShippedWorkflow | null): Judged {
  if (f.launcher !== 'actions') return skipped(NOT_NEEDED);
  const wanted =
    shape === 'own'
      ? ownAgentSecrets(f.workflow!.text!)
      : shape
        ? [...AGENTS[shape].credentials]
        : [...new Set(Object.values(AGENTS).flatMap((a) => a.credentials))];
  const who = shape === 'own' ? "your agent's" : shape ? `${shape}'s` : "an agent's";
  const listed = Array.isArray(f.secrets) ? f.secrets : null;
  if (shape === 'own' && wanted.length === 0)
    return skipped('Your agent names no secret (YOKE_AGENT_SECRETS is empty in the workflow).');
  if (!listed)
    return failed(
      `yoke could not list ${f.repo}'s Actions secrets${f.secrets && !Array.isArray(f.secrets) ? `: ${f.secrets.error}` : ''}.`,
      'Give the app the Secrets permission (Read-only: it lists names, never values), as app.yml asks, and accept it on the installation.',
    );
  if (shape === 'own' ? wanted.every((w) => listed.includes(w)) : wanted.some((w) => listed.includes(w)))
    return passed(`${who} secret is set (${wanted.filter((w) => listed.includes(w)).join(', ')}).`);
  const absent = shape === 'own' ? wanted.filter((w) => !listed.includes(w)) : wanted;
  return failed(
    `${who} secret is not set: ${shape === 'own' ? absent.join(', ') : `none of ${absent.join(', ')}`} ${absent.length === 1 || shape !== 'own' ? 'is' : 'are'} among ${f.repo}'s Actions secrets.`,
    `Add the repository secret ${absent[0]}: Settings, Secrets and variables, Actions, New repository secret.`,
  );
}

/** Whether GitHub's runners reach this yoke's runner at YOKE_PUBLIC_URL (not needed when runs reach it through GitHub). */
function publicUrlCheck(f: DoctorFacts): Judged {
  if (f.launcher !== 'actions') return skipped(NOT_NEEDED);
  if (f.runsReach === 'github')
    return skipped(
      'Not needed: runs reach this yoke through GitHub (YOKE_RUNS_REACH=github): they fetch the runner from refs/yoke/runner/<sha256> in the repository and hand their results back as workflow artifacts.',
    );
  const url = `${f.publicUrl}/yoke/runner.mjs`;
  const fix = `Set YOKE_PUBLIC_URL to the https address at which GitHub's runners reach this yoke (the app's webhook URL without /api/github/webhooks), and make sure ${url} answers there.`;
  const probe = f.runner?.probe;
  if (!probe || !probe.ok) return failed(`${url} did not answer: ${probe?.error ?? 'not asked'}.`, fix);
  if (probe.status !== 200) return failed(`${url} answered ${probe.status}, not yoke's runner.`, fix);
  if (probe.sha256 !== f.runner!.expectedSha256)
    return failed(`${url} serves another runner than this yoke's: another server answers at YOKE_PUBLIC_URL.`, fix);
  return passed(`${url} serves this yoke's runner.`);
}

/** DP05: each gated stage's environment has yoke's protection rule and lets yoke/deploy/* branches deploy. */
function environmentsCheck(f: DoctorFacts): Judged {
  if (f.environments.length === 0)
    return skipped("No deploy stage follows a QA stage, so no environment waits on yoke's rule.");
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
      policy.kind === 'all' || (policy.kind === 'custom' && policy.branches.some((b) => globToRegExp(b).test(sample)));
    if (!allowed)
      problems.push({
        text: `Environment ${e.environment} deploys only from ${policy.kind === 'custom' ? `the branches ${policy.branches.join(', ') || '(none listed)'}` : 'protected branches'}, and yoke deploys from yoke/deploy/* branches.`,
        fix: `Settings, Environments, \`${e.environment}\`, Deployment branches and tags: choose Selected branches and tags and add the rule \`yoke/deploy/*\`.`,
      });
  }
  if (problems.length === 0)
    return passed(
      `${f.environments.map((e) => e.environment).join(', ')} ${f.environments.length === 1 ? "has yoke's protection rule and lets" : "have yoke's protection rule and let"} yoke/deploy/* branches deploy.`,
    );
  return failed(problems.map((p) => p.text).join(' '), problems.map((p) => p.fix).join(' '));
}

/** Pure: every check, from what was read. */
export function judgeDoctor(f: DoctorFacts, shipped: ShippedSetup): DoctorReport {
  if (!f.installation) {
    const r = makeRefusal('repo_not_installed', { repo: f.repo });
    return { repo: f.repo, ok: false, checks: [{ check: 'installed', ...failed(r.message, r.recovery) }] };
  }
  const [permissions, events] = grantChecks(f.repo, f.installation, shipped);
  const workflow = workflowCheck(f, shipped);
  const checks: DoctorCheck[] = [
    { check: 'installed', ...passed(`yoke's app is installed on ${f.repo} (installation ${f.installation.id}).`) },
    { check: 'reading', ...(f.reading ? judgeReading(f.reading) : skipped('The store was not asked.')) },
    { check: 'permissions', ...permissions },
    { check: 'events', ...events },
    { check: 'opt_in', ...optInCheck(f) },
    { check: 'landing', ...judgeLanding(f.repo, f.landing, f.appId) },
    { check: 'workflow', ...workflow.judged },
    { check: 'secret', ...secretCheck(f, workflow.shape) },
    { check: 'public_url', ...publicUrlCheck(f) },
    { check: 'environments', ...environmentsCheck(f) },
  ];
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
