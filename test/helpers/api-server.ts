import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiHandler } from '../../src/http/api.js';
import { fetchRunnerProbe, loadShippedSetup, runDoctor } from '../../src/http/operator/doctor.js';
import { runnerBundle } from '../../src/agent/bundle.js';
import type { OidcVerifier } from '../../src/http/api/oidc.js';
import type { Harness } from './fleet.js';

/** yoke's API handler on a loopback port, over a test harness's fleet. */
export async function startApi(
  h: Harness,
  opts: {
    tokens: string[];
    people?: { login: string; token: string }[];
    oidc?: OidcVerifier;
    audience?: string;
    port?: number;
    dispatch?: { responseLimitMs: number; hostedCapMs: number };
    /** How Actions runs reach yoke (YOKE_RUNS_REACH). */
    runsReach?: 'api' | 'github';
    /** The public URL yoke doctor fetches the runner by (this server's own by default). */
    publicUrl?: () => string;
  },
): Promise<{ url: string; close: () => Promise<void> }> {
  let url = '';
  const handler = createApiHandler({
    fleet: h.fleet,
    lastPass: () => h.engine.lastPass,
    nextPass: (repo) => h.engine.nextPass(repo),
    // yoke doctor over the harness's forge; its public URL is this server's own.
    doctor: (repo) =>
      runDoctor(
        {
          forge: h.forge,
          launcher: 'actions',
          publicUrl: opts.publicUrl?.() ?? url,
          configRefreshMs: 0,
          probeRunner: (u) => fetchRunnerProbe(u),
          runnerSha256: async () => (await runnerBundle()).sha256,
          appId: 1,
        },
        loadShippedSetup(),
        repo,
      ),
    apiTokens: opts.tokens,
    personTokens: opts.people ?? [],
    oidc: opts.oidc ?? null,
    audience: opts.audience ?? 'https://yoke.test',
    dispatch: opts.dispatch,
    ...(opts.runsReach ? { runsReach: opts.runsReach } : {}),
  });
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    if (!(await handler(req, res))) {
      res.writeHead(404);
      res.end();
    }
  };
  // A handler that throws fails the request, as the server's would, never as an unhandled rejection.
  const server: Server = createServer(
    (req, res) => void serve(req, res).catch(() => (res.headersSent ? res.destroy() : (res.writeHead(500), res.end()))),
  );
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Closing cuts open connections too, as a server that goes down would.
  return {
    url,
    close: () => new Promise((r) => (server.close(() => r()), server.closeAllConnections())),
  };
}
