import { describe, expect, it } from 'vitest';
import { permits } from '../../src/kernel/permission.js';
import { matchRoute, ROUTES, type RouteDef } from '../../src/http/api/routes.js';
import { startApi } from '../helpers/api-server.js';
import { REPO, makeDeliveryHarness } from '../helpers/delivery.js';
import { liveRun } from '../helpers/run-api.js';

// TR25: every route yoke serves is declared once with its role, and a walk
// over all of them with each kind of credential finds each one let through
// exactly when its role says: an operator everywhere; a person by what
// GitHub says their login may do on the route's repository; a run's own
// credential on its QA routes only; nobody without a token.

const AUTH_CODES = new Set(['unauthorized', 'permission_required', 'operator_token_required', 'run_role_forbidden']);

const PEOPLE = [
  { login: 'ada', token: 'ada-person-token', permission: 'admin' },
  { login: 'mo', token: 'mo-person-token', permission: 'maintain' },
  { login: 'wes', token: 'wes-person-token', permission: 'write' },
  { login: 'tri', token: 'tri-person-token', permission: 'triage' },
  { login: 'rea', token: 'rea-person-token', permission: 'read' },
  { login: 'non', token: 'non-person-token', permission: 'none' },
] as const;

type Kind = 'nobody' | 'operator' | 'run' | (typeof PEOPLE)[number]['login'];

/** Whether a credential of this kind may call the route, from its declared role alone. */
function expected(def: RouteDef, kind: Kind): boolean {
  if (def.role === 'public') return true;
  if (kind === 'nobody') return false;
  if (def.role === 'run-report') return kind === 'run'; // its handler's own check: only that run's credential
  if (kind === 'operator') return true;
  if (kind === 'run') return def.run === true;
  if (def.role === 'operator') return false;
  // A listing answers everyone with a role, showing a person only the rows of repositories they may read.
  if (def.repo === 'listing') return true;
  return permits(PEOPLE.find((p) => p.login === kind)!.permission, def.role);
}

describe('TR25 the route table', () => {
  it('declares each route once, with a role and what it does, and matches the paths yoke serves', () => {
    const keys = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const r of ROUTES) expect(r.what, r.path).toMatch(/^[A-Z]/);
    expect(matchRoute('POST', '/yoke/api/deployment-runs/dr-1/stages/qa/waive')).toEqual({
      name: 'waive',
      def: ROUTES.find((r) => r.path.endsWith('/waive')),
      params: { run: 'dr-1', stage: 'qa' },
    });
    expect(matchRoute('GET', '/yoke/api/deployment-runs/dr-1/stages/qa/waive')).toBeNull();
    expect(matchRoute('POST', '/yoke/api/repos/acme/api/issues/x/start')).toBeNull();
  });

  it.each([
    ['as yoke keeps it', 'acme', 'api'],
    ['in another casing', 'ACME', 'Api'],
  ])(
    'TR25 a walk over every API route with every kind of credential lets each through exactly as its role says, asking GitHub for people (the repository named %s)',
    async (_how, owner, name) => {
      const h = await makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } } });
      Object.assign(h.forge.repo(REPO).permissions, Object.fromEntries(PEOPLE.map((p) => [p.login, p.permission])));
      const api = await startApi(h, {
        tokens: ['op-token-0123456789'],
        people: PEOPLE.map(({ login, token }) => ({ login, token })),
      });
      try {
        const created = await fetch(`${api.url}/yoke/api/deployment-runs`, {
          method: 'POST',
          headers: { authorization: 'Bearer op-token-0123456789', 'content-type': 'application/json' },
          body: JSON.stringify({ repo: REPO }),
        });
        const dr = ((await created.json()) as { id: string }).id;
        const runId = await liveRun(h, { kind: 'fix', issue: 1, secret: 'fix-run-secret-0123456789' });
        const params: Record<string, string> = {
          owner,
          name,
          number: '1',
          stage: 'qa',
          item: 'APP-1',
          execution: 'ex-1',
          request: 'req-1',
        };
        const headersOf = (kind: Kind): Record<string, string> =>
          kind === 'nobody'
            ? {}
            : kind === 'operator'
              ? { authorization: 'Bearer op-token-0123456789' }
              : kind === 'run'
                ? { authorization: 'Bearer fix-run-secret-0123456789', 'x-yoke-run': runId }
                : { authorization: `Bearer ${PEOPLE.find((p) => p.login === kind)!.token}` };
        const kinds: Kind[] = ['nobody', 'operator', 'run', ...PEOPLE.map((p) => p.login)];
        const wrong: string[] = [];
        let asked = 0;
        for (const def of ROUTES.filter((r) => r.path.startsWith('/yoke/api/') || r.path === '/yoke/runner.mjs')) {
          for (const kind of kinds) {
            const path = def.path.replace(/:(\w+)/g, (_m, n: string) =>
              n === 'run' ? (def.path.startsWith('/yoke/api/runs') ? runId : dr) : params[n]!,
            );
            // Bodies that name the repository where the route reads it from; the rest may well be refused as invalid, which is not an auth refusal.
            const body =
              def.method === 'POST'
                ? JSON.stringify(def.repo === 'body' ? { repo: REPO, items: ['APP-9'] } : {})
                : undefined;
            const before = h.forge.calls.getPermission;
            const res = await fetch(`${api.url}${path}`, {
              method: def.method,
              headers: { ...headersOf(kind), 'content-type': 'application/json' },
              body,
            });
            const text = await res.text();
            let code = 'ok';
            try {
              code = (JSON.parse(text) as { error?: { code: string } }).error?.code ?? 'ok';
            } catch {
              /* the runner's script */
            }
            const passed = def.role === 'run-report' ? ![401, 403].includes(res.status) : !AUTH_CODES.has(code);
            if (passed !== expected(def, kind))
              wrong.push(`${def.method} ${def.path} as ${kind}: ${res.status} ${code}`);
            if (def.repo === 'listing' && passed) {
              const rows = Object.values(JSON.parse(text) as Record<string, unknown[]>)[0]!;
              const mayRead =
                kind === 'operator' || permits(PEOPLE.find((p) => p.login === kind)?.permission ?? 'none', 'read');
              if (rows.length > 0 !== mayRead)
                wrong.push(`${def.method} ${def.path} as ${kind} lists ${rows.length} rows`);
            }
            if (
              PEOPLE.some((p) => p.login === kind) &&
              ['read', 'write', 'maintain'].includes(def.role) &&
              def.repo !== 'listing'
            )
              asked += h.forge.calls.getPermission > before ? 1 : 0;
          }
        }
        expect(wrong).toEqual([]);
        // Each person's request on a repository's route asked GitHub then, not from an earlier answer.
        expect(asked).toBe(
          ROUTES.filter((r) => ['read', 'write', 'maintain'].includes(r.role) && r.repo !== 'listing').length *
            PEOPLE.length,
        );
      } finally {
        await api.close();
      }
    },
  );
});

describe('TR25 a repository yoke has no row for', () => {
  it('TR25 is refused to every person when the app cannot see it, and otherwise asks GitHub about the person, under any casing', async () => {
    const h = await makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } } });
    Object.assign(h.forge.repo(REPO).permissions, Object.fromEntries(PEOPLE.map((p) => [p.login, p.permission])));
    // Installed, never opted in, so never read: yoke keeps no row for it.
    h.forge.addRepo('acme/shop', null);
    h.forge.repo('acme/shop').permissions.rea = 'read';
    h.forge.repo('acme/shop').permissions.mo = 'maintain';
    const api = await startApi(h, {
      tokens: ['op-token-0123456789'],
      people: PEOPLE.map(({ login, token }) => ({ login, token })),
    });
    try {
      expect(await h.store.repos.find('acme/shop')).toBeUndefined();
      const ask = async (login: string, path: string) => {
        const res = await fetch(`${api.url}${path}`, {
          headers: { authorization: `Bearer ${PEOPLE.find((p) => p.login === login)!.token}` },
        });
        const body = (await res.json()) as { error?: { code: string; message: string } };
        return `${res.status} ${body.error?.code ?? 'ok'}`;
      };
      // A login with no access reads nothing of it, under its exact name or another casing.
      expect(await ask('non', '/yoke/api/repos/acme/shop/plan')).toBe('403 permission_required');
      expect(await ask('non', '/yoke/api/repos/Acme/Shop/plan')).toBe('403 permission_required');
      expect(await ask('rea', '/yoke/api/repos/ACME/shop/doctor')).toBe('403 permission_required');
      // Let through: the plan then says what is missing (no opt-in file), which is the route's own answer.
      expect(await ask('rea', '/yoke/api/repos/acme/SHOP/plan')).toBe('409 repo_not_opted_in');
      expect(await ask('mo', '/yoke/api/repos/acme/shop/doctor')).toBe('200 ok');
      // One the app cannot see is refused as not there, to everyone, admins included.
      for (const login of ['ada', 'non'])
        expect(await ask(login, '/yoke/api/repos/acme/secret-project/plan')).toBe('404 repo_not_installed');
      // The store's rows of a known repository answer under another casing, as its own name.
      expect(await ask('mo', '/yoke/api/repos/ACME/API/doctor')).toBe('200 ok');
    } finally {
      await api.close();
    }
  });
});

describe('TR25 who a request is recorded as made by', () => {
  it("TR25 a person's start through the API is recorded as theirs, by login, and says so where people look; an operator token's as the operator's", async () => {
    const h = await makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } } });
    Object.assign(h.forge.repo(REPO).permissions, { wes: 'write' });
    // Not labelled: nothing starts on them before someone asks.
    h.forge.addIssue(REPO, 5, []);
    h.forge.addIssue(REPO, 6, []);
    const api = await startApi(h, {
      tokens: ['op-token-0123456789'],
      people: [{ login: 'wes', token: 'wes-person-token' }],
    });
    try {
      const start = (issue: number, token: string) =>
        fetch(`${api.url}/yoke/api/repos/acme/api/issues/${issue}/start`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        });
      const first = await start(5, 'wes-person-token');
      expect(first.status, await first.clone().text()).toBe(200);
      const second = await start(6, 'op-token-0123456789');
      expect(second.status, await second.clone().text()).toBe(200);
      // Started in the pass each request woke (or the next one), each saying by whom.
      await h.engine.schedulerTick();
      expect((await h.store.runs.listForRepo(REPO)).map((r) => [r.kind, r.subject, r.why])).toEqual([
        ['afk_manual', 'issue#5', 'started by @wes'],
        ['afk_manual', 'issue#6', 'started with an operator token'],
      ]);
    } finally {
      await api.close();
    }
  });
});
