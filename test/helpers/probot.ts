import { generateKeyPairSync } from 'node:crypto';
import nock from 'nock';
import { Probot } from 'probot';
import { createRequire } from 'node:module';
import { createYokeApp, type YokeRuntime } from '../../src/app.js';
import { DEFAULT_CLIENT_POLICY, yokeOctokit } from '../../src/forge/github/octokit.js';
import { settingsWith, type OperatorSettings } from '../../src/config/env.js';
import type { CacheStats } from '../../src/forge/github/conditional-cache.js';
import { testStore } from './test-store.js';
import { ManualClock, noTimers } from './fleet.js';

const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as unknown;

export const API = 'https://api.github.com';
export const WEBHOOK_SECRET = 'test-webhook-secret';
export const BOT = 'yoke-test[bot]';

let key: string | null = null;
export function testPrivateKey(): string {
  key ??= generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs1', format: 'pem' })
    .toString();
  return key;
}

export function testSettings(over: Partial<OperatorSettings> = {}): OperatorSettings {
  return settingsWith({
    dbPath: ':memory:',
    apiTokens: ['operator-token'],
    publicUrl: 'https://yoke.example.test',
    botLogin: BOT,
    ...over,
  });
}

export interface ProbotHarness {
  probot: Probot;
  rt: YokeRuntime;
  clock: ManualClock;
  stats: CacheStats;
  handlers: ((req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => unknown)[];
  /** Waits until every queued pass has finished. */
  settle(): Promise<void>;
}

export async function makeProbot(
  opts: { settings?: Partial<OperatorSettings>; throttle?: boolean; baseUrl?: string; retry?: boolean } = {},
): Promise<ProbotHarness> {
  // A fixed instant, not the wall clock: refreshes fall on slots of their period (SC02), so a test that moves the
  // clock on would otherwise cross a slot at some times of day and not at others.
  const clock = new ManualClock();
  const store = testStore(clock);
  const stats: CacheStats = { requests: 0, notModified: 0 };
  const Octokit = yokeOctokit(store, clock, stats, {
    maxInFlight: 10,
    retry: opts.retry ? { ...DEFAULT_CLIENT_POLICY.retry } : { enabled: false, doNotRetry: [] },
    throttle: { enabled: opts.throttle ?? false, maxRetries: 2, maxWaitSeconds: 5 },
  });
  const probot = new Probot({
    appId: 1,
    privateKey: testPrivateKey(),
    secret: WEBHOOK_SECRET,
    Octokit,
    logLevel: 'fatal',
    baseUrl: opts.baseUrl,
  });
  const handlers: ProbotHarness['handlers'] = [];
  const { appFn, runtime } = createYokeApp({
    settings: testSettings(opts.settings),
    store,
    clock,
    timers: noTimers,
    startTicks: false,
    cacheStats: stats,
  });
  await probot.load(appFn, { cwd: process.cwd(), addHandler: (h) => handlers.push(h) });
  const rt = await runtime;
  return { probot, rt, clock, stats, handlers, settle: () => rt.engine.lock.run(async () => {}) };
}

type Example = { name: string; examples: Record<string, unknown>[] };

/** A payload GitHub publishes, picked by event and action (and an installation, as apps receive). */
export function publishedPayload<T = Record<string, any>>(event: string, action?: string): T {
  const group = (examples as unknown as Example[]).find((e) => e.name === event);
  const found =
    group?.examples.find((ex) => (action === undefined || ex.action === action) && ex.installation) ??
    group?.examples.find((ex) => action === undefined || ex.action === action);
  if (!found) throw new Error(`no published ${event}.${action} payload`);
  const copy = structuredClone(found) as Record<string, any>;
  copy.installation ??= { id: 1, node_id: 'MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==' };
  return copy as T;
}

export const REPO = 'Codertocat/Hello-World';

/** The installation token exchange Probot makes on first use of an installation. */
export function mockToken(scope: nock.Scope, installationId = 1): nock.Scope {
  return scope.post(`/app/installations/${installationId}/access_tokens`).reply(201, {
    token: `ghs_test${installationId}`,
    expires_at: new Date(Date.now() + 3600_000).toISOString(),
    permissions: {},
    repository_selection: 'all',
  });
}

export function yamlConfig(text: string) {
  return [200, text, { 'content-type': 'text/plain; charset=utf-8', etag: '"cfg1"' }] as const;
}

export function github(): nock.Scope {
  return nock(API);
}

export function resetNock(): void {
  nock.cleanAll();
  nock.disableNetConnect();
}
