import { runnerBundle } from './agent/bundle.js';
import type { ApplicationFunction, Probot } from 'probot';
import { systemClock, systemTimers, type Clock, type Timers } from './kernel/clock.js';
import { handlePolledComments } from './commands/handle.js';
import { runsAudienceOf, type OperatorSettings } from './config/env.js';
import { resolveSettings } from './config/settings.js';
import { fleetPolicyOf, type FleetContext } from './fleet/context.js';
import { Engine } from './fleet/engine.js';
import type { BudgetBook } from './forge/budget.js';
import type { CacheStats } from './forge/conditional-cache.js';
import { GitHubForge } from './forge/github.js';
import type { Octokit } from './forge/octokit.js';
import type { Forge } from './forge/types.js';
import { recordLanderExit } from './http/run-report.js';
import { createApiHandler } from './http/api.js';
import { fetchRunnerProbe, loadShippedSetup, runDoctor, type ShippedSetup } from './http/doctor.js';
import { OidcVerifier } from './http/oidc.js';
import { ActionsLauncher } from './launcher/actions.js';
import { CommandLauncher, runContainmentOf } from './launcher/command.js';
import type { Launcher } from './launcher/launcher.js';
import { sweepCloseouts } from './delivery/gate/check.js';
import { syncQaLabels } from './delivery/gate/labels.js';
import { sweepEnvironments } from './delivery/deployments/environment-check.js';
import { sweepProtectionReviews, sweepWaitingRuns } from './delivery/deployments/protection-rule.js';
import { DEFAULT_PROCESS_LEASE, startProcessLease } from './process-lease.js';
import { recordOwedOnMerge } from './delivery/runs/owed.js';
import { DEFAULT_LEADERSHIP, Leadership } from './leadership.js';
import { LeadershipLost, OPEN_FENCE, type Fence } from './kernel/fence.js';
import { fencedForge } from './forge/fenced.js';
import { openStoreAt, type Store } from './store/store.js';
import { printable } from './store/open-sql.js';
import { registerWebhooks } from './webhooks/handlers.js';

// The composition root: builds the store, forge, launcher and engine from the
// operator settings, and wires webhooks, the two ticks and the HTTP routes.
// No rule lives here.

/** DP05: how often each repository's gated environments are read again for yoke's rule. */
const ENVIRONMENT_CHECK_MS = 10 * 60_000;

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
  const forge = new GitHubForge({
    appOctokit: async () => (await app.auth()) as unknown as Octokit,
    installationOctokit: async (id) => (await app.auth(id)) as unknown as Octokit,
    now: () => clock.now(),
    botLogin: settings.botLogin,
    budget: overrides.budget,
  });
  // The launcher tells the engine when a child exits, so it is built before the engine exists.
  let engine: Engine | null = null;
  let fleet!: FleetContext;
  const reapNow = () =>
    void engine?.reaperTick().catch((err) => app.log.error({ err: String(err) }, 'reaper pass failed'));
  const launcher: Launcher =
    settings.launcher === 'actions'
      ? new ActionsLauncher({
          forge,
          now: () => clock.now(),
          unseenGraceMs: settings.dispatchGraceMs,
          runner: runnerBundle,
          reach: settings.runsReach,
        })
      : new CommandLauncher({
          command: settings.command!,
          logDir: `${settings.dbPath}.runs`,
          contain: settings.commandsUncontained ? null : runContainmentOf(settings, overrides.env ?? process.env),
          onExit: (runId, kind, exit) => {
            // A lander's exit is its verdict's last word; the reaper runs after it either way (and ends a run it could not record).
            const recorded = kind === 'lander' ? recordLanderExit(fleet, runId, exit) : Promise.resolve();
            void recorded
              .catch((err: unknown) =>
                app.log.error({ run: runId, err: String(err) }, 'could not record the lander exit'),
              )
              .finally(reapNow);
          },
        });
  // TR12: this process's lease: what it reserves and claims is its own until the lease lapses.
  const lease = await startProcessLease({ store, clock, timers, log: app.log }, DEFAULT_PROCESS_LEASE);
  // One leader for the ticks, however many processes share the store.
  const leadership = new Leadership({
    leaders: store.leaders,
    processId: lease.id,
    log: app.log,
    policy: DEFAULT_LEADERSHIP,
  });
  // Always on: Actions runs launched before a switch to the command launcher can still report.
  const oidc = new OidcVerifier({
    issuer: settings.oidcIssuer,
    jwksUrl: settings.oidcJwksUrl,
    audience: runsAudienceOf(settings),
    now: () => clock.now(),
  });
  const ticking = overrides.startTicks !== false;
  engine = new Engine({
    lead: () => leadership.fence(),
    processId: lease.id,
    store,
    forge,
    launcher,
    clock,
    timers,
    log: app.log,
    policy: fleetPolicyOf(settings),
    apiUrl: runsAudienceOf(settings),
    webUrl: settings.webUrl,
    trustedMarkerLogins: settings.trustedMarkerLogins,
    onPolledComments: (repo, comments) => handlePolledComments(fleet, repo, comments),
    // Delivery listens to the fleet's merges: an item's delivery is owed from its claim PR's merge.
    onMerged: recordOwedOnMerge,
    ...(settings.launcher === 'actions' && settings.runsReach === 'github'
      ? { handedResults: { verifier: oidc, audience: runsAudienceOf(settings) } }
      : {}),
  });
  fleet = engine.context();
  const running = engine;

  // TR13: a webhook asks for a reap; only the leader reaps (a follower's pass would launch too), behind its fence (TR31).
  const reapLed = (fence: Fence | null) =>
    void (
      fence &&
      engine
        ?.reaperTick(fence)
        .catch(
          (err: unknown) => err instanceof LeadershipLost || app.log.error({ err: String(err) }, 'reaper pass failed'),
        )
    );
  const reapIfLeading = () =>
    void leadership
      .fence()
      .then(reapLed, (err: unknown) => app.log.error({ err: String(err) }, 'could not ask who leads'));
  registerWebhooks(app, { fleet, store, forge, clock, reap: reapIfLeading });

  let shipped: ShippedSetup | undefined;
  addHandler(
    createApiHandler({
      fleet,
      lastPass: () => running.lastPass,
      nextPass: (repo) => running.nextPass(repo),
      doctor: (repo) =>
        runDoctor(
          {
            forge,
            launcher: settings.launcher,
            runsReach: settings.runsReach,
            publicUrl: settings.publicUrl,
            configRefreshMs: settings.configRefreshMs,
            probeRunner: (url) => fetchRunnerProbe(url),
            runnerSha256: async () => (await runnerBundle()).sha256,
          },
          (shipped ??= loadShippedSetup()),
          repo,
        ),
      apiTokens: settings.apiTokens,
      personTokens: settings.personTokens,
      oidc,
      audience: settings.publicUrl,
      runsReach: settings.launcher === 'actions' ? settings.runsReach : 'api',
      webUrl: settings.webUrl,
      dashboardRefreshMs: settings.dashboardRefreshMs,
      dispatch: { responseLimitMs: settings.responseLimitMs, hostedCapMs: settings.hostedCapMs },
    }),
  );

  const renewing = ticking ? leadership.start(timers) : null;
  if (ticking) {
    running.start();
    // Recover first: reap what ended while yoke was down, then fill (the leader does).
    void leadership.fence().then(reapLed);
  }
  // DX04/DX06: skipped and refused close-outs are tried again by themselves, on the reaper's cadence. The
  // database door sweeps too: a run it drives past its last stage is closing until they are done (TR12).
  let sweeping = false;
  const sweep = timers.setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    // A qa: label whose webhook was lost is found by reading what changed (each repository every few minutes).
    // The server sweeps when it leads; the database door, which never ticks, sweeps what it drives.
    // The leader's sweeps write to GitHub through its fence (TR31).
    void (ticking ? leadership.fence() : Promise.resolve(OPEN_FENCE))
      .then(async (fence) => {
        if (!fence) return;
        const fenced = { ...fleet, forge: fencedForge(fleet.forge, fence) };
        await sweepCloseouts(fenced);
        await syncQaLabels(fenced);
        await sweepEnvironments(fenced, ENVIRONMENT_CHECK_MS);
        await sweepProtectionReviews(fenced);
        // With no inbound connection, runs waiting at yoke's protection rule are found by polling.
        if (settings.runsReach === 'github') await sweepWaitingRuns(fenced);
      })
      .catch((err) => err instanceof LeadershipLost || app.log.warn({ err: String(err) }, 'close-out sweep failed'))
      .finally(() => (sweeping = false));
  }, settings.reaperMs);
  app.log.info(
    { cap: settings.globalCap, launcher: launcher.name, db: printable(settings.database) },
    'yoke is running',
  );
  return {
    engine: running,
    fleet,
    store,
    forge,
    settings,
    cacheStats,
    stop: async () => {
      running.stop();
      // The tick in flight finishes under its lead: giving the lead up first would fence its last writes off.
      await running.lock.run(async () => {});
      await renewing?.stop();
      await lease.stop();
      timers.clearInterval(sweep);
      if (launcher instanceof CommandLauncher) launcher.killAll();
    },
  };
}
