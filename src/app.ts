import type { Server } from 'node:http';
import { listenForMetrics, Metrics } from './http/operator/metrics.js';
import { NO_TRACER, type Tracer } from './kernel/trace.js';
import { runnerBundle } from './agent/bundle.js';
import type { ApplicationFunction, Probot } from 'probot';
import { systemClock, systemTimers, type Clock, type Timers } from './kernel/clock.js';
import { handlePolledComments } from './commands/handle.js';
import { runsAudienceOf, type OperatorSettings } from './config/env.js';
import { resolveSettings } from './config/settings.js';
import { fleetPolicyOf, type FleetContext } from './fleet/context.js';
import type { RunKind } from './store/fleet/runs.js';
import { Ticks } from './ticks.js';
import { Engine, type EngineDeps } from './fleet/engine/engine.js';
import type { BudgetBook } from './forge/github/budget.js';
import type { CacheStats } from './forge/github/conditional-cache.js';
import { GitHubForge } from './forge/github/github.js';
import type { Forge } from './forge/types.js';
import { recordLanderExit } from './http/api/run-report.js';
import { createApiHandler } from './http/api.js';
import {
  fetchRunnerProbe,
  loadShippedSetup,
  readingFacts,
  runDoctor,
  type DoctorReport,
  type ShippedSetup,
} from './http/operator/doctor.js';
import { OidcVerifier } from './http/api/oidc.js';
import { ActionsLauncher } from './launcher/actions.js';
import { CommandLauncher, runContainmentOf, type ProcessExit } from './launcher/command.js';
import type { Launcher } from './launcher/launcher.js';
import { DEFAULT_PROCESS_LEASE, startProcessLease, type ProcessLease } from './process-lease.js';
import { recordOwedOnMerge } from './delivery/runs/owed.js';
import { DEFAULT_LEADERSHIP, Leadership } from './leadership.js';
import { openStoreAt, type Store } from './store/store.js';
import { printable } from './store/sql/open-sql.js';
import { registerWebhooks } from './webhooks/handlers.js';
import { errorStack } from './kernel/error-text.js';

// The composition root: builds the store, forge, launcher and engine from the
// operator settings, and wires webhooks, the ticks (ticks.ts) and the HTTP
// routes. No rule lives here.

export interface YokeOverrides {
  settings?: OperatorSettings;
  env?: Record<string, string | undefined>;
  clock?: Clock;
  timers?: Timers;
  store?: Store;
  cacheStats?: CacheStats;
  /** Start the ticks (default true). Tests drive passes by hand. */
  startTicks?: boolean;
  /** The request budgets the GitHub client spends from (SC03), shared with the Octokit class. */
  budget?: BudgetBook;
  /** The tracer yoke's spans are made by (tracing.ts); OpenTelemetry's no-op unless tracing is on. */
  tracer?: Tracer;
  /** What this process does once its lease lapsed (process-lease.ts): `yoke serve` stops. */
  onLeaseLapsed?: () => void;
}

export interface YokeRuntime {
  engine: Engine;
  fleet: FleetContext;
  store: Store;
  forge: Forge;
  settings: OperatorSettings;
  cacheStats: CacheStats;
  /** Stops the ticks and gives up what this process holds (its lead, its lease). */
  stop(): Promise<void>;
}

export function createYokeApp(overrides: YokeOverrides = {}): {
  appFn: ApplicationFunction;
  runtime: Promise<YokeRuntime>;
} {
  let resolveRuntime!: (r: YokeRuntime) => void;
  let rejectRuntime!: (e: unknown) => void;
  const runtime = new Promise<YokeRuntime>((res, rej) => {
    resolveRuntime = res;
    rejectRuntime = rej;
  });

  const appFn: ApplicationFunction = async (app: Probot, { addHandler }) => {
    try {
      resolveRuntime(await wire(app, addHandler, overrides));
    } catch (err) {
      rejectRuntime(err);
      throw err;
    }
  };
  return { appFn, runtime };
}

/** The launcher the settings name; a run's exit (the command launcher's) is told to `exited`. */
function launcherOf(
  settings: OperatorSettings,
  deps: { forge: Forge; clock: Clock; env: Record<string, string | undefined> },
  exited: (runId: string, kind: RunKind, exit: ProcessExit) => void,
): Launcher {
  if (settings.launcher === 'actions')
    return new ActionsLauncher({
      forge: deps.forge,
      now: () => deps.clock.now(),
      unseenGraceMs: settings.dispatchGraceMs,
      runner: runnerBundle,
      reach: settings.runsReach,
    });
  return new CommandLauncher({
    command: settings.command!,
    logDir: `${settings.dbPath}.runs`,
    contain: settings.commandsUncontained ? null : runContainmentOf(settings, deps.env),
    onExit: exited,
  });
}

/** `yoke doctor` for one repository, from the settings; the shipped set-up is read once, when first asked. */
function doctorOf(settings: OperatorSettings, forge: Forge, store: Store): (repo: string) => Promise<DoctorReport> {
  let shipped: ShippedSetup | undefined;
  return (repo) =>
    runDoctor(
      {
        forge,
        launcher: settings.launcher,
        runsReach: settings.runsReach,
        publicUrl: settings.publicUrl,
        configRefreshMs: settings.configRefreshMs,
        probeRunner: (url) => fetchRunnerProbe(url),
        runnerSha256: async () => (await runnerBundle()).sha256,
        appId: settings.appId,
        reading: (installationId) => readingFacts(store, installationId),
      },
      (shipped ??= loadShippedSetup()),
      repo,
    );
}

/** The HTTP routes, as the settings configure them. */
function apiOf(
  settings: OperatorSettings,
  engine: Engine,
  { forge, oidc, metrics }: { forge: Forge; oidc: OidcVerifier; metrics: Metrics },
) {
  return createApiHandler({
    metrics,
    metricsToken: settings.metricsToken,
    fleet: engine.context(),
    lastPass: () => engine.lastPass,
    nextPass: (repo) => engine.nextPass(repo),
    doctor: doctorOf(settings, forge, engine.context().store),
    apiTokens: settings.apiTokens,
    personTokens: settings.personTokens,
    oidc,
    audience: settings.publicUrl,
    runsReach: settings.launcher === 'actions' ? settings.runsReach : 'api',
    webUrl: settings.webUrl,
    dashboardRefreshMs: settings.dashboardRefreshMs,
    dispatch: { responseLimitMs: settings.responseLimitMs, hostedCapMs: settings.hostedCapMs },
  });
}

/** GitHub, through the app's installations (Probot's authentication). */
function forgeOf(app: Probot, settings: OperatorSettings, clock: Clock, budget: BudgetBook | undefined): GitHubForge {
  return new GitHubForge({
    appOctokit: async () => app.auth(),
    installationOctokit: async (id) => app.auth(id),
    now: () => clock.now(),
    botLogin: settings.botLogin,
    budget,
  });
}

/** Runs' OIDC tokens, checked against the issuer's keys. Always on: Actions runs launched before a switch to the command launcher can still report. */
const oidcOf = (settings: OperatorSettings, clock: Clock): OidcVerifier =>
  new OidcVerifier({
    issuer: settings.oidcIssuer,
    jwksUrl: settings.oidcJwksUrl,
    audience: runsAudienceOf(settings),
    now: () => clock.now(),
  });

/** The figures `/yoke/metrics` serves, and (YOKE_METRICS_ADDRESS) a listener of their own. */
async function metricsOf(
  settings: OperatorSettings,
  parts: { engine: Engine; leadership: Leadership; github: CacheStats },
): Promise<{ metrics: Metrics; metricsServer: Server | null }> {
  const { engine, leadership } = parts;
  const metrics = new Metrics({
    fleet: engine.context(),
    lastPass: () => engine.lastPass,
    lead: () => ({ leads: leadership.isLeader, epoch: leadership.leadEpoch }),
    github: parts.github,
  });
  const metricsServer = settings.metricsAddress ? await listenForMetrics(metrics, settings.metricsAddress) : null;
  return { metrics, metricsServer };
}

/** The engine, as the settings configure it, over the parts wire built. */
function engineOf(
  settings: OperatorSettings,
  parts: Pick<
    EngineDeps,
    'processId' | 'store' | 'forge' | 'launcher' | 'clock' | 'timers' | 'log' | 'onPass' | 'onPassStart' | 'tracer'
  > & {
    leadership: Leadership;
    oidc: OidcVerifier;
  },
): Engine {
  const { leadership, oidc, ...deps } = parts;
  // What the command handler works with: made once, not for every repository of every pass.
  let fleet: FleetContext | undefined;
  const engine: Engine = new Engine({
    ...deps,
    lead: () => leadership.fence(),
    policy: fleetPolicyOf(settings),
    apiUrl: runsAudienceOf(settings),
    webUrl: settings.webUrl,
    trustedMarkerLogins: settings.trustedMarkerLogins,
    onPolledComments: (repo, comments) => handlePolledComments((fleet ??= engine.context()), repo, comments),
    // Delivery listens to the fleet's merges: an item's delivery is owed from its claim PR's merge.
    onMerged: recordOwedOnMerge,
    ...(settings.launcher === 'actions' && settings.runsReach === 'github'
      ? { handedResults: { verifier: oidc, audience: runsAudienceOf(settings) } }
      : {}),
  });
  return engine;
}

/** The engine tells the metrics of each pass: its start (its requests count from there) and its end. */
const passMetrics = (metrics: () => Metrics): Pick<EngineDeps, 'onPass' | 'onPassStart'> => ({
  onPass: (report, seconds) => metrics().passed(report, seconds),
  onPassStart: () => metrics().passStarted(),
});

/**
 * TR12: this process's lease (what it reserves and claims is its own until the lease lapses, and then `onLapsed`),
 * and TR13: the one leader for the ticks, however many processes share the store.
 */
async function leaseAndLead(
  deps: { store: Store; clock: Clock; timers: Timers; log: Probot['log'] },
  onLapsed: (() => void) | undefined,
): Promise<{ lease: ProcessLease; leadership: Leadership }> {
  const lease = await startProcessLease({ ...deps, onLapsed }, DEFAULT_PROCESS_LEASE);
  const leadership = new Leadership({
    leaders: deps.store.leaders,
    processId: lease.id,
    log: deps.log,
    policy: DEFAULT_LEADERSHIP,
  });
  return { lease, leadership };
}

async function wire(
  app: Probot,
  addHandler: (handler: ReturnType<typeof createApiHandler>) => void,
  overrides: YokeOverrides,
): Promise<YokeRuntime> {
  const settings = resolveSettings(overrides);
  const clock = overrides.clock ?? systemClock;
  const timers = overrides.timers ?? systemTimers;
  const store = overrides.store ?? (await openStoreAt(settings.database));
  const cacheStats: CacheStats = overrides.cacheStats ?? { requests: 0, notModified: 0 };
  // The GitHub client counts each request by route and status as it sees it; the metrics read the counts.
  cacheStats.byRoute ??= new Map();
  const forge = forgeOf(app, settings, clock, overrides.budget);
  // The launcher tells the engine and the ticks when a run's process exits, so it is built before they exist.
  let ticks: Ticks | null = null;
  const launcher = launcherOf(settings, { forge, clock, env: overrides.env ?? process.env }, (runId, kind, exit) => {
    // A lander's exit is its verdict's last word; the reaper runs after it either way (and ends a run it could not record).
    const recorded = kind === 'lander' ? recordLanderExit(engine.context(), runId, exit) : Promise.resolve();
    void recorded
      .catch((err: unknown) => app.log.error({ run: runId, err: errorStack(err) }, 'could not record the lander exit'))
      .finally(() => ticks?.reapNow());
  });
  const { lease, leadership } = await leaseAndLead({ store, clock, timers, log: app.log }, overrides.onLeaseLapsed);
  const oidc = oidcOf(settings, clock);
  const engine: Engine = engineOf(settings, {
    leadership,
    processId: lease.id,
    store,
    forge,
    launcher,
    clock,
    timers,
    log: app.log,
    oidc,
    ...passMetrics(() => metrics),
    tracer: overrides.tracer ?? NO_TRACER,
  });
  const fleet = engine.context();
  const { metrics, metricsServer } = await metricsOf(settings, { engine, leadership, github: cacheStats });
  ticks = new Ticks({
    engine,
    leadership,
    timers,
    log: app.log,
    ticking: overrides.startTicks !== false,
    reaperMs: settings.reaperMs,
    pollWaitingRuns: settings.runsReach === 'github',
  });
  const owned = ticks;
  registerWebhooks(app, fleet, () => owned.reapIfLeading(), metrics);
  addHandler(apiOf(settings, engine, { forge, oidc, metrics }));
  ticks.start();
  app.log.info(
    { cap: settings.globalCap, launcher: launcher.name, db: printable(settings.database) },
    'yoke is running',
  );
  return {
    engine,
    fleet,
    store,
    forge,
    settings,
    cacheStats,
    stop: async () => {
      overrides.budget?.stop(); // requests held for their budget are not sent: the pass stops at its next step
      await owned.stop();
      await lease.stop();
      await new Promise<void>((r) => (metricsServer ? metricsServer.close(() => r()) : r()));
      if (launcher instanceof CommandLauncher) launcher.killAll();
    },
  };
}
