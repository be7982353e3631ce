import {
  judgeDoctor,
  type DoctorFacts,
  type DoctorReport,
  type RunnerProbe,
  type ShippedSetup,
  type ShippedWorkflow,
} from './doctor-judge.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseAppYml, readShippedAppYml } from '../../config/app-yml.js';
import { parseDeliverySettings } from '../../config/delivery.js';
import type { RepoConfig } from '../../config/repo-config.js';
import type { LandingFacts } from './doctor-landing.js';
import type { ReadingFacts } from './doctor-reading.js';
import type { Store } from '../../store/store.js';
import { gatedStages } from '../../delivery/deployments/environment-check.js';
import type { Forge, RepoRef } from '../../forge/types.js';
import { errorText } from '../../kernel/error-text.js';
import { sameRepo } from '../../kernel/ids.js';

// `yoke doctor OWNER/REPO`: a preflight from the running server. It reads
// what GitHub holds of a repository's set-up (the installation's grants, the
// workflow on the default branch, the secrets' names, the environments) and
// whether yoke's public URL serves its runner; then judges, purely, each
// check with the setting that fixes it (doctor-judge.ts).

export * from './doctor-judge.js';

/** Reads app.yml and the agents' workflow templates from yoke's own files (a checkout's or the package's). */
export function loadShippedSetup(): ShippedSetup {
  const read = (rel: string) => readFileSync(new URL(`../../../${rel}`, import.meta.url), 'utf8');
  const manifest = parseAppYml(readShippedAppYml());
  const workflows: Record<ShippedWorkflow, string> = {
    'claude-code': read('templates/agents/claude-code.yml'),
    codex: read('templates/agents/codex.yml'),
    own: read('templates/yoke-run.yml'),
  };
  return { permissions: manifest.default_permissions, events: manifest.default_events, workflows };
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
  /** This yoke's App ID (APP_ID): the source the default branch's rules must require yoke/lander from. */
  appId: number | null;
  /** SC08: who reads an installation, and how the reading is spread (from the store). */
  reading?: (installationId: number) => Promise<ReadingFacts>;
}

/** SC08: the reading processes and the leases in force, as the reading check reads them. */
export async function readingFacts(
  store: Pick<Store, 'processes' | 'installationLeases'>,
  installationId: number,
): Promise<ReadingFacts> {
  const leases = await store.installationLeases.current();
  const readers = (await store.processes.readers()).map((p) => ({
    id: p.id,
    host: p.host,
    pid: p.pid,
    installations: leases.filter((l) => l.holder === p.id).map((l) => l.installationId),
  }));
  return { installationId, readers, holder: leases.find((l) => l.installationId === installationId)?.holder ?? null };
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
    appId: deps.appId,
    landing: null,
    reading: null,
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
  const landing = config.state === 'valid' ? await landingFacts(forge, ref, config.config) : null;
  const reading = deps.reading ? await deps.reading(ref.installationId) : null;
  return judgeDoctor(
    { ...base, installation, config, workflow, secrets, runner, environments, landing, reading },
    shipped,
  );
}

/** The opt-in file's way of landing, and the rules in force on the default branch. */
async function landingFacts(forge: Forge, ref: RepoRef, config: RepoConfig): Promise<LandingFacts> {
  const branch = ref.defaultBranch;
  const { enabled, fast_forward: fastForward, merge_method: mergeMethod } = config.autoland;
  return {
    branch: branch ?? 'the default branch',
    autoland: { enabled, fastForward, mergeMethod },
    rules: enabled && branch ? await forge.readBranchRules(ref, branch).catch(() => null) : null,
  };
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
