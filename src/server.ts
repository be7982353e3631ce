import { startTracing } from './tracing.js';
import { bubblewrapProblem } from './kernel/bubblewrap.js';
import { run, type Server } from 'probot';
import { createYokeApp, type YokeRuntime } from './app.js';
import { systemClock } from './kernel/clock.js';
import { createPrivateKey } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { resolve as resolvePath } from 'node:path';
import { convertAppManifest } from './forge/app-manifest.js';
import { readShippedAppYml } from './config/app-yml.js';
import { createSetupHandler } from './http/pages/setup-page.js';
import {
  appCredentialProblem,
  hostingProblems,
  runContainmentProblem,
  inSetupMode,
  webhookProxyProblem,
  webhookSecretProblem,
} from './config/hosting-checks.js';
import { SettingsError, resolveSettings } from './config/settings.js';
import type { DestinationStream } from 'pino';
import { createLogger } from './kernel/log.js';
import type { CacheStats } from './forge/github/conditional-cache.js';
import { BudgetBook, GITHUB_SECONDARY_LIMITS } from './forge/github/budget.js';
import { clientPolicy, yokeOctokit } from './forge/github/octokit.js';
import { openStoreAt } from './store/store.js';
import { errorText } from './kernel/error-text.js';
import { SchemaTooNewError } from './store/sql/schema.js';

// Starts yoke the way `npm start` does: Probot's runner, configured from an
// environment (APP_ID, PRIVATE_KEY, GHE_HOST, PORT, YOKE_*). The sandbox uses
// the same path with its own environment.

export interface StartedYoke {
  /** Probot's server; null while yoke serves only its setup page. */
  server: Server | null;
  /** Resolves once the app is loaded; never, in setup mode (no credentials). */
  runtime: Promise<YokeRuntime>;
  stop(): Promise<void>;
}

/** yoke's log as LOG_LEVEL and LOG_FORMAT say, to a destination of the caller's (the sandbox keeps it). */
const loggerOf = (env: Record<string, string | undefined>, destination: DestinationStream | undefined) =>
  createLogger({
    level: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT === 'json' ? 'json' : 'pretty',
    ...(destination ? { destination } : {}),
  });

/** The setup page alone, on PORT (and HOST), until yoke has an app. */
async function startSetup(
  env: Record<string, string | undefined>,
  destination?: DestinationStream,
): Promise<StartedYoke> {
  const log = await loggerOf(env, destination);
  const handler = createSetupHandler({
    appYml: readShippedAppYml(),
    env,
    convert: convertAppManifest,
    writeEnv: (vars) => writeDotEnv('.env', vars),
  });
  const server = createServer((req, res) => void handler(req, res).catch(() => res.destroy()));
  const port = Number(env.PORT ?? 3000);
  // On this machine only, unless the operator names an address (HOST=0.0.0.0 in a container): whoever reaches it registers yoke's app.
  const host = env.HOST ?? '127.0.0.1';
  await new Promise<void>((done) => server.listen(port, host, done));
  const shown = host === '127.0.0.1' || host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  log.info(`yoke has no GitHub App yet: open http://${shown}:${port}/yoke/setup to register one.`);
  return {
    server: null,
    runtime: new Promise<YokeRuntime>(() => {}),
    stop: () => new Promise<void>((done) => (server.closeAllConnections(), server.close(() => done()))),
  };
}

/** Sets these variables in a .env file, keeping its other lines; a key's newlines are written as \n in double quotes. */
export function writeDotEnv(path: string, vars: Record<string, string>): string {
  const lines = existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
  const kept = lines.filter((l) => !Object.keys(vars).some((k) => l.startsWith(`${k}=`)));
  const set = Object.entries(vars).map(([k, v]) => `${k}="${v.replace(/\r?\n/g, '\\n')}"`);
  writeFileSync(path, `${[...kept, ...set].join('\n')}\n`, { mode: 0o600 });
  // It holds the app's key: private even when the file was there before.
  chmodSync(path, 0o600);
  return resolvePath(path);
}

/** Whether yoke can listen on PORT (and HOST): a port another process holds stops yoke before it says it runs. */
function portProblem(port: number, host: string | undefined): Promise<string | null> {
  return new Promise((answer) => {
    const probe = createNetServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      answer(
        err.code === 'EADDRINUSE'
          ? `PORT ${port} is taken: another process listens there (another yoke?). Stop it, or set PORT to a free port.`
          : err.code === 'EACCES'
            ? `PORT ${port} needs more privilege than yoke has (ports below 1024 do). Set PORT to 1024 or above, and put a proxy on ${port} if it must be that one.`
            : `yoke cannot listen on PORT ${port}${host ? ` at HOST ${host}` : ''}: ${errorText(err)}. Set PORT (and HOST) to a port and address of this machine.`,
      ),
    );
    probe.listen(port, host, () => probe.close(() => answer(null)));
  });
}

export async function startYoke(
  env: Record<string, string | undefined>,
  opts: { destination?: DestinationStream | undefined; onLeaseLapsed?: () => void } = {},
): Promise<StartedYoke> {
  const settings = resolveSettings({ env });
  const credentialProblem = appCredentialProblem(env, existsSync);
  if (credentialProblem) throw new SettingsError([credentialProblem]);
  const problems = [
    ...hostingProblems(
      env,
      (path) => readFileSync(path, 'utf8'),
      (pem) => createPrivateKey(pem),
    ),
    webhookSecretProblem(env),
    webhookProxyProblem(env),
    runContainmentProblem(env, bubblewrapProblem),
  ].filter((p): p is string => p !== null);
  if (problems.length) throw new SettingsError(problems);
  // No app yet: yoke's own setup page registers one, from the app.yml yoke ships.
  if (inSetupMode(env)) return startSetup(env, opts.destination);
  const taken = await portProblem(Number(env.PORT || 3000), env.HOST);
  if (taken) throw new SettingsError([taken]);
  const log = await loggerOf(env, opts.destination);
  // A store that cannot be opened is a setting to fix (YOKE_DB_PATH, YOKE_DATABASE_URL), said as one.
  const store = await openStoreAt(settings.database).catch((err: unknown) => {
    throw err instanceof SchemaTooNewError ? err : new SettingsError([errorText(err)]);
  });
  const cacheStats: CacheStats = { requests: 0, notModified: 0 };
  // SC03: one budget per installation, planned against GitHub's secondary limits (off with throttling, for a server without them).
  const budget = settings.throttle ? new BudgetBook(GITHUB_SECONDARY_LIMITS, () => systemClock.now()) : null;
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or its traces endpoint) is set: then spans go there over OTLP/HTTP.
  const tracing = startTracing(settings);
  const { appFn, runtime } = createYokeApp({
    settings,
    env,
    store,
    cacheStats,
    budget: budget ?? undefined,
    tracer: tracing.tracer,
    ...(opts.onLeaseLapsed ? { onLeaseLapsed: opts.onLeaseLapsed } : {}),
  });
  const server = await run(appFn, {
    env,
    log,
    Octokit: yokeOctokit(
      store,
      systemClock,
      cacheStats,
      clientPolicy(settings.throttle, settings.maxRequestsInFlight),
      { budget, tracer: tracing.tracer },
    ),
  } as Parameters<typeof run>[1]);
  return {
    server,
    runtime,
    stop: async () => {
      const rt = await Promise.race([runtime, Promise.resolve(null)]);
      // Bounded: the ticks give the pass in flight STOP_WAIT_MS, then the lead up.
      await rt?.stop();
      await server.stop();
      await tracing.shutdown();
      await store.close();
    },
  };
}
