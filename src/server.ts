import { run, type Server } from 'probot';
import { createYokeApp, type YokeRuntime } from './app.js';
import { systemClock } from './kernel/clock.js';
import { createPrivateKey } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import {
  appCredentialProblem,
  hostingProblems,
  inSetupMode,
  setupWebhookUrl,
  webhookProxyProblem,
  webhookSecretProblem,
} from './config/env.js';
import { SettingsError, resolveSettings } from './config/settings.js';
import type { DestinationStream } from 'pino';
import { createLogger } from './kernel/log.js';
import type { CacheStats } from './forge/conditional-cache.js';
import { BudgetBook, GITHUB_SECONDARY_LIMITS } from './forge/budget.js';
import { clientPolicy, yokeOctokit } from './forge/octokit.js';
import { openStoreAt } from './store/store.js';

// Starts yoke the way `npm start` does: Probot's runner, configured from an
// environment (APP_ID, PRIVATE_KEY, GHE_HOST, PORT, YOKE_*). The sandbox uses
// the same path with its own environment.

export interface StartedYoke {
  server: Server;
  /** Resolves once the app is loaded; never, in Probot's setup mode (no credentials). */
  runtime: Promise<YokeRuntime>;
  stop(): Promise<void>;
}

export async function startYoke(
  env: Record<string, string | undefined>,
  opts: { destination?: DestinationStream | undefined } = {},
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
  ].filter((p): p is string => p !== null);
  if (problems.length) throw new SettingsError(problems);
  if (inSetupMode(env)) {
    // Probot's setup page takes the registered app's webhook URL from
    // WEBHOOK_PROXY_URL (else the root path, where nothing listens) and, with
    // neither set, makes a smee.io channel it would later install a client for.
    // yoke's webhook path is the answer to both; the server itself is given no proxy.
    process.env.WEBHOOK_PROXY_URL = setupWebhookUrl(env);
    env = { ...env, WEBHOOK_PROXY_URL: undefined };
  }
  const log = await createLogger({
    level: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT === 'json' ? 'json' : 'pretty',
    ...(opts.destination ? { destination: opts.destination } : {}),
  });
  const store = await openStoreAt(settings.database);
  const cacheStats: CacheStats = { requests: 0, notModified: 0 };
  // SC03: one budget per installation, planned against GitHub's secondary limits (off with throttling, for a server without them).
  const budget = settings.throttle ? new BudgetBook(GITHUB_SECONDARY_LIMITS, () => systemClock.now()) : null;
  const { appFn, runtime } = createYokeApp({ settings, store, cacheStats, budget: budget ?? undefined });
  const server = await run(appFn, {
    env,
    log,
    Octokit: yokeOctokit(
      store,
      systemClock,
      cacheStats,
      clientPolicy(settings.throttle, settings.maxRequestsInFlight),
      budget,
    ),
  } as Parameters<typeof run>[1]);
  return {
    server,
    runtime,
    stop: async () => {
      const rt = await Promise.race([runtime, Promise.resolve(null)]);
      await rt?.stop();
      await rt?.engine.lock.run(async () => {});
      await server.stop();
      await store.close();
    },
  };
}
