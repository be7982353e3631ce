import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Probot } from 'probot';
import { createYokeApp } from './app.js';
import { systemClock } from './kernel/clock.js';
import { resolveSettings } from './config/settings.js';
import { createLogger } from './kernel/log.js';
import type { CacheStats } from './forge/github/conditional-cache.js';
import { clientPolicy, yokeOctokit } from './forge/github/octokit.js';
import { isPostgresUrl } from './store/sql/open-sql.js';
import { openStoreAt } from './store/store.js';

// The database door: for when yoke deploys itself and its server is down.
// The driver runs the same dispatch code in this process, against yoke's
// store (its SQLite file, or its PostgreSQL URL), through yoke's own API
// handler on a loopback port that only this process knows the token of. It
// needs the app's credentials (APP_ID, PRIVATE_KEY, GHE_HOST for a GitHub
// Enterprise Server) to read and write GitHub.

export interface Door {
  url: string;
  token: string;
  /** TR30: what the commands the driver runs must not reach: the store's file (SQLite) and the key's. */
  hidden: string[];
  close(): Promise<void>;
}

export async function openDatabaseDoor(env: Record<string, string | undefined>, database: string): Promise<Door> {
  const token = `door-${randomBytes(24).toString('hex')}`;
  const where = isPostgresUrl(database)
    ? { YOKE_DATABASE_URL: database }
    : { YOKE_DB_PATH: database, YOKE_DATABASE_URL: undefined };
  const settings = { ...resolveSettings({ env: { ...env, ...where } }), apiTokens: [token] };
  // TR30: the key is read from its file and kept in no environment, so nothing the door's driver runs can read it from /proc.
  if (env.PRIVATE_KEY)
    throw new Error(
      "The database door reads the app's key from its file, never from the environment, where the commands it runs could read it: unset PRIVATE_KEY and set PRIVATE_KEY_PATH to the .pem file.",
    );
  if (!env.APP_ID || !env.PRIVATE_KEY_PATH)
    throw new Error(
      "The database door needs the app's credentials: set APP_ID, and PRIVATE_KEY_PATH to the app's .pem file, as the server has them.",
    );
  let privateKey: string;
  try {
    privateKey = readFileSync(env.PRIVATE_KEY_PATH, 'utf8');
  } catch {
    throw new Error(
      `The database door could not read PRIVATE_KEY_PATH (${env.PRIVATE_KEY_PATH}): point it at the app's .pem file.`,
    );
  }
  const store = await openStoreAt(database, { mustExist: true });
  const cacheStats: CacheStats = { requests: 0, notModified: 0 };
  const baseUrl = env.GHE_HOST ? `${env.GHE_PROTOCOL ?? 'https'}://${env.GHE_HOST}/api/v3` : undefined;
  // The door's log goes to stderr at warn: the driver's own lines are what a person reads.
  const log = await createLogger({ level: env.LOG_LEVEL ?? 'warn', destination: pino.destination(2) });
  const probot = new Probot({
    log,
    appId: env.APP_ID,
    privateKey,
    ...(baseUrl ? { baseUrl } : {}),
    Octokit: yokeOctokit(store, systemClock, cacheStats, clientPolicy(settings.throttle, settings.maxRequestsInFlight)),
  } as ConstructorParameters<typeof Probot>[0]);
  // No ticks: the door dispatches; the server (when it is back) runs the fleet.
  const { appFn, runtime } = createYokeApp({ settings, store, cacheStats, startTicks: false });
  type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  let handler: Handler | null = null;
  await appFn(probot, { addHandler: (h: Handler) => (handler = h) } as never);
  const rt = await runtime;
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const h = handler as Handler | null;
    if (!h || !(await h(req, res))) {
      res.writeHead(404);
      res.end();
    }
  };
  // A handler that throws answers 500 rather than leaving the request hanging and the rejection unhandled.
  const server = createServer(
    (req, res) => void serve(req, res).catch(() => (res.headersSent ? res.destroy() : (res.writeHead(500), res.end()))),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    hidden: [...(isPostgresUrl(database) ? [] : [database]), env.PRIVATE_KEY_PATH],
    close: async () => {
      await rt.stop();
      await new Promise<void>((r) => server.close(() => r()));
      await store.close();
    },
  };
}
