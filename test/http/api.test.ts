import { afterEach, describe, expect, it } from 'vitest';
import { startApi } from '../helpers/api-server.js';
import { AUTOLAND, makeHarness, type Harness } from '../helpers/fleet.js';
import { OidcVerifier } from '../../src/http/api/oidc.js';
import {
  AUDIENCE,
  ISSUER,
  LANDER_HEAD,
  WF,
  good,
  jwk,
  jwt,
  liveRun,
  other,
  post,
  startRunApi,
} from '../helpers/run-api.js';

// The HTTP API over real loopback HTTP, with an OIDC issuer whose keys the test makes.

const TOKEN = 'operator-secret';

/** What a page of yoke's holds inside its frame (the header and style every page shares). */
const mainOf = (html: string): string | undefined => /<main id="main">([\s\S]*?)<\/main>/.exec(html)?.[1];

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

async function start(h: Harness): Promise<string> {
  const api = await startRunApi(h, [TOKEN]);
  close = api.close;
  return api.url;
}

describe('POST /yoke/api/runs/:id/result', () => {
  it('accepts a command run report with its per-run secret, and refuses a second one', async () => {
    const h = makeHarness();
    const base = await start(h);
    const id = await liveRun(h);
    const ok = await post(
      `${base}/yoke/api/runs/${id}/result`,
      { outcome: 'failure', summary: 'tests would not build' },
      'the-secret',
    );
    expect(ok.status).toBe(200);
    expect(await h.store.runs.get(id)).toMatchObject({
      reportedOutcome: 'failure',
      summary: 'tests would not build',
      status: 'live',
    });
    const again = await post(`${base}/yoke/api/runs/${id}/result`, { outcome: 'success' }, 'the-secret');
    expect(again.status).toBe(409);
    expect(((await again.json()) as any).error.code).toBe('run_already_reported');
  });

  it('refuses unknown run ids, wrong secrets, bad JSON, oversized bodies and missing verdicts, and loses no run record', async () => {
    const h = makeHarness();
    const base = await start(h);
    const id = await liveRun(h, { kind: 'lander' });
    const cases: [string, unknown, string | undefined, number, string][] = [
      [`/yoke/api/runs/nope/result`, { outcome: 'success' }, 'the-secret', 404, 'run_unknown'],
      [`/yoke/api/runs/${id}/result`, { outcome: 'success', verdict: 'accept' }, 'wrong', 401, 'run_secret_invalid'],
      [`/yoke/api/runs/${id}/result`, { outcome: 'success', verdict: 'accept' }, undefined, 401, 'run_secret_invalid'],
      [`/yoke/api/runs/${id}/result`, '{"outcome": "success",', 'the-secret', 400, 'validation_failed'],
      [`/yoke/api/runs/${id}/result`, { outcome: 'done' }, 'the-secret', 400, 'validation_failed'],
      [`/yoke/api/runs/${id}/result`, { outcome: 'success' }, 'the-secret', 400, 'verdict_required'],
      [
        `/yoke/api/runs/${id}/result`,
        { outcome: 'success', verdict: 'accept', summary: 'x'.repeat(70_000) },
        'the-secret',
        413,
        'body_too_large',
      ],
      // TR01: a verdict names the head it judged, and only the head yoke dispatched the lander on counts.
      [
        `/yoke/api/runs/${id}/result`,
        { outcome: 'success', verdict: 'accept' },
        'the-secret',
        409,
        'report_head_mismatch',
      ],
      [
        `/yoke/api/runs/${id}/result`,
        { outcome: 'success', verdict: 'accept', head_sha: 'f'.repeat(40) },
        'the-secret',
        409,
        'report_head_mismatch',
      ],
      [
        `/yoke/api/runs/${id}/result`,
        { outcome: 'success', verdict: 'accept', head_sha: 'main' },
        'the-secret',
        400,
        'validation_failed',
      ],
    ];
    for (const [path, body, token, status, code] of cases) {
      const res = await post(`${base}${path}`, body, token);
      const json = (await res.json()) as any;
      expect([res.status, json.error.code], path + JSON.stringify(body).slice(0, 40)).toEqual([status, code]);
      expect(json.error.recovery.length).toBeGreaterThan(10);
    }
    expect(await h.store.runs.get(id)).toMatchObject({ status: 'live', reportedOutcome: null, verdict: null });
    const good = await post(
      `${base}/yoke/api/runs/${id}/result`,
      { outcome: 'success', verdict: 'reject', head_sha: LANDER_HEAD, summary: '2 tests fail' },
      'the-secret',
    );
    expect(good.status).toBe(200);
    expect(await h.store.runs.get(id)).toMatchObject({ verdict: 'reject', reportedOutcome: 'success' });
  });

  const refusal = async (base: string, id: string, token: string) => {
    const res = await post(`${base}/yoke/api/runs/${id}/result`, { outcome: 'success' }, token);
    const json = (await res.json()) as any;
    return [res.status, json.error?.code, json.error?.message];
  };

  it('TR03 binds an OIDC report to exactly the dispatched workflow run: keys, audience, repository and its id, workflow file and ref, event, run id', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    const base = await start(h);
    const id = await liveRun(h, { secret: null, ref: 'yoke-run.yml@main#4242' });
    h.forge.workflowRuns.set(id, WF);
    const now = Math.floor(h.clock.now() / 1000);
    const claims = good(now);
    const refusals: [string, string][] = [
      [jwt({ ...claims, aud: 'https://elsewhere.test' }), "the token's aud claim is not accepted (check_failed)"],
      [jwt({ ...claims, repository: 'acme/other' }), 'the token is for acme/other, not acme/api'],
      [jwt({ ...claims, run_id: '1' }), 'the token is from workflow run 1, not 4242'],
      [jwt({ ...claims, repository_id: '5' }), 'the token is for repository id 5, not 99'],
      [
        jwt({ ...claims, event_name: 'pull_request_target' }),
        'the token is from a pull_request_target event, not workflow_dispatch',
      ],
      [
        jwt({ ...claims, workflow_ref: 'acme/api/.github/workflows/other.yml@refs/heads/main' }),
        'the token is from acme/api/.github/workflows/other.yml@refs/heads/main, not acme/api/.github/workflows/yoke-run.yml@refs/heads/main',
      ],
      [
        jwt({ ...claims, workflow_ref: 'acme/api/.github/workflows/yoke-run.yml@refs/heads/feature' }),
        'the token is from acme/api/.github/workflows/yoke-run.yml@refs/heads/feature, not acme/api/.github/workflows/yoke-run.yml@refs/heads/main',
      ],
      [jwt({ ...claims, exp: now - 600 }), 'the token has expired'],
      [jwt({ ...claims, iss: 'https://evil.test' }), "the token's iss claim is not accepted (check_failed)"],
      [jwt(claims, other.privateKey), 'the signature does not verify'],
      ['not-a-token', 'the token was refused (ERR_JWS_INVALID)'],
    ];
    for (const [token, detail] of refusals)
      expect(await refusal(base, id, token)).toEqual([
        401,
        'run_token_invalid',
        `The OIDC token was refused: ${detail}`,
      ]);
    expect((await h.store.runs.get(id))?.reportedOutcome).toBeNull();
    const ok = await post(`${base}/yoke/api/runs/${id}/result`, { outcome: 'success' }, jwt(claims));
    expect(ok.status).toBe(200);
    expect((await h.store.runs.get(id))?.reportedOutcome).toBe('success');
  });

  it('TR35 with YOKE_RUNS_REACH=github the API takes no run\u2019s result, push or claim, even with a token bound to the run: results come only as the run\u2019s artifact', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    const api = await startRunApi(h, [TOKEN], 'github');
    close = api.close;
    const id = await liveRun(h, { secret: null, ref: 'yoke-run.yml@main#4242' });
    const fix = await liveRun(h, { kind: 'fix', secret: null, ref: 'yoke-run.yml@main#4242' });
    h.forge.workflowRuns.set(id, WF);
    h.forge.workflowRuns.set(fix, WF);
    const token = jwt(good(Math.floor(h.clock.now() / 1000)));
    const said = `This yoke takes runs' results back through GitHub only (YOKE_RUNS_REACH=github), so run ${id} is heard from its workflow run's result artifact, never through this API.`;
    expect(await refusal(api.url, id, token)).toEqual([403, 'run_reaches_through_github', said]);
    for (const path of ['push', 'claim']) {
      const res = await post(`${api.url}/yoke/api/runs/${fix}/${path}`, { title: 'x' }, token);
      expect([res.status, ((await res.json()) as any).error.code], path).toEqual([403, 'run_reaches_through_github']);
    }
    expect((await h.store.runs.get(id))?.reportedOutcome).toBeNull();
    expect(h.forge.calls.auth).toBe(0);
  });

  it('TR03 a workflow run that a writer started or re-ran reports nothing, nor a token naming another actor', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    const base = await start(h);
    const id = await liveRun(h, { secret: null, ref: 'yoke-run.yml@main#4242' });
    const now = Math.floor(h.clock.now() / 1000);
    h.forge.workflowRuns.set(id, { ...WF, actor: 'mallory', triggeringActor: 'mallory' });
    expect(await refusal(base, id, jwt(good(now)))).toEqual([
      401,
      'run_token_invalid',
      'The OIDC token was refused: workflow run 4242 was started by mallory, not by yoke[bot]',
    ]);
    h.forge.workflowRuns.set(id, { ...WF, actor: 'yoke[bot]', triggeringActor: 'mallory' });
    expect(await refusal(base, id, jwt(good(now)))).toEqual([
      401,
      'run_token_invalid',
      'The OIDC token was refused: workflow run 4242 was re-run by mallory, not by yoke[bot]',
    ]);
    h.forge.workflowRuns.set(id, WF);
    expect(await refusal(base, id, jwt({ ...good(now), actor: 'mallory' }))).toEqual([
      401,
      'run_token_invalid',
      'The OIDC token was refused: the token is from a run started by mallory, not by yoke[bot]',
    ]);
    expect((await h.store.runs.get(id))?.reportedOutcome).toBeNull();
    expect((await post(`${base}/yoke/api/runs/${id}/result`, { outcome: 'success' }, jwt(good(now)))).status).toBe(200);
  });

  it("TR03 before the reaper binds the run, a report resolves it first: another run's token is refused, the dispatched one accepted", async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    const base = await start(h);
    const id = await liveRun(h, { secret: null, ref: 'pending:yoke-run.yml@main' });
    const now = Math.floor(h.clock.now() / 1000);
    // Not listed yet: refused, not waved through.
    expect(await refusal(base, id, jwt(good(now)))).toEqual([
      401,
      'run_token_invalid',
      `The OIDC token was refused: the yoke-run.yml run yoke dispatched for ${id} is not listed yet; report again in a moment`,
    ]);
    h.forge.workflowRuns.set(id, WF);
    // Another workflow run of the same repository and workflow (another yoke run, say) cannot report for this one.
    expect(await refusal(base, id, jwt({ ...good(now), run_id: '5000' }))).toEqual([
      401,
      'run_token_invalid',
      'The OIDC token was refused: the token is from workflow run 5000, not 4242',
    ]);
    expect((await h.store.runs.get(id))?.launcherRef).toBe('yoke-run.yml@main#4242');
    expect((await post(`${base}/yoke/api/runs/${id}/result`, { outcome: 'success' }, jwt(good(now)))).status).toBe(200);
  });

  it('TR03 fetches the issuer keys once per cooldown for unknown key ids, and keeps them when a fetch fails', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    let up = true;
    let fetched = 0;
    const fetchKeys = (async () => {
      fetched++;
      if (!up) throw new Error('connect ECONNREFUSED');
      return new Response(JSON.stringify({ keys: [jwk] }), { status: 200 });
    }) as typeof fetch;
    const oidc = new OidcVerifier({
      issuer: ISSUER,
      jwksUrl: `${ISSUER}/.well-known/jwks`,
      audience: AUDIENCE,
      now: h.clock.now,
      fetch: fetchKeys,
      cooldownMs: 30_000,
      keysMaxAgeMs: 60_000,
    });
    const now = Math.floor(h.clock.now() / 1000);
    expect((await oidc.verify(jwt(good(now)))).ok).toBe(true);
    expect(fetched).toBe(1);
    // Tokens with unknown key ids: at most one more fetch within the cooldown, however many arrive.
    for (let i = 0; i < 20; i++)
      expect((await oidc.verify(jwt(good(now), other.privateKey, `unknown-${i}`))).ok).toBe(false);
    expect(fetched).toBe(1);
    // The issuer goes down and the keys age out: genuine reports still verify with the keys yoke has.
    up = false;
    await new Promise((r) => setTimeout(r, 5)); // jose ages keys on its own clock
    const stale = new OidcVerifier({
      issuer: ISSUER,
      jwksUrl: `${ISSUER}/.well-known/jwks`,
      audience: AUDIENCE,
      now: h.clock.now,
      fetch: fetchKeys,
      keysMaxAgeMs: 1,
    });
    up = true;
    expect((await stale.verify(jwt(good(now)))).ok).toBe(true);
    up = false;
    await new Promise((r) => setTimeout(r, 5));
    const before = fetched;
    expect((await stale.verify(jwt(good(now)))).ok).toBe(true);
    expect((await stale.verify(jwt(good(now)))).ok).toBe(true);
    expect(fetched - before).toBe(1); // one failed attempt, then the cooldown
  });
});

describe('operator routes', () => {
  it('need an operator bearer token', async () => {
    const h = makeHarness();
    const base = await start(h);
    const res = await post(`${base}/yoke/api/repos/acme/api/reset`, {});
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: {
        code: 'unauthorized',
        message: 'This request carries no valid bearer token.',
        recovery: 'Send `Authorization: Bearer <token>` with a token listed in YOKE_API_TOKENS.',
      },
    });
    expect((await fetch(`${base}/yoke/api/fleet`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
  });

  it('SP15 a manual start on a paused repo answers 409 with the code and the recovery; reset un-pauses and kicks a pass', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    h.forge.addIssue('acme/api', 3);
    await h.engine.schedulerTick();
    for (const r of await h.store.runs.listLive()) {
      await h.store.runs.recordReport(r.id, { outcome: 'success', verdict: null, summary: null }, 0);
      h.launcher.finish(r.id);
    }
    await h.engine.recover();
    for (let i = 0; i < 3; i++) await h.store.repos.addFailure('acme/api', 3, h.clock.now());
    const base = await start(h);
    const refused = await post(`${base}/yoke/api/repos/acme/api/issues/3/start`, {}, TOKEN);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual({
      error: {
        code: 'repo_paused',
        message: 'acme/api is paused: it reached 3 consecutive AFK failures, and only a reset lifts the pause.',
        recovery: 'Comment `/yoke reset` on any issue of acme/api, or run `yoke repo reset acme/api`.',
      },
    });
    const reset = await post(`${base}/yoke/api/repos/acme/api/reset`, {}, TOKEN);
    expect(reset.status).toBe(200);
    await h.engine.lock.run(async () => {});
    const started = await post(`${base}/yoke/api/repos/acme/api/issues/3/start`, {}, TOKEN);
    expect(started.status).toBe(200);
    await h.engine.lock.run(async () => {});
    expect((await h.store.runs.listLive()).map((r) => [r.kind, r.subject])).toEqual([['afk_manual', 'issue#3']]);
  });

  it('toggles the auto loop, with toggle-on kicking a pass', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', { auto: false });
    h.forge.addIssue('acme/api', 1);
    await h.engine.schedulerTick();
    const base = await start(h);
    const bad = await post(`${base}/yoke/api/repos/acme/api/auto`, { enabled: 'yes' }, TOKEN);
    expect(bad.status).toBe(400);
    const on = await post(`${base}/yoke/api/repos/acme/api/auto`, { enabled: true }, TOKEN);
    expect(await on.json()).toEqual({ ok: true, message: 'The auto loop of acme/api is on.' });
    await h.engine.lock.run(async () => {});
    expect((await h.store.runs.listLive()).map((r) => r.kind)).toEqual(['afk_auto']);
    const unknown = await post(`${base}/yoke/api/repos/acme/nope/reset`, {}, TOKEN);
    expect([unknown.status, ((await unknown.json()) as any).error.code]).toEqual([404, 'repo_not_installed']);
  });

  it('serves the fleet report and the dashboard', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    await h.engine.schedulerTick();
    const base = await start(h);
    const report = (await (
      await fetch(`${base}/yoke/api/fleet`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as any;
    expect(report.liveCount).toBe(1);
    expect(report.repos[0]).toMatchObject({ repo: 'acme/api', cap: 2, paused: false });
    expect(JSON.stringify(report)).not.toContain('secretHash');
    expect((await fetch(`${base}/yoke`)).status).toBe(401);
    // The server's root sends a person to the dashboard (its sign-in), not to a blank 404.
    const root = await fetch(`${base}/`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([302, '/yoke']);
    // TR07: a token in the URL is not accepted; the sign-in form sets an HttpOnly, SameSite=Strict cookie.
    const inUrl = await fetch(`${base}/yoke?token=${TOKEN}`);
    expect(inUrl.status).toBe(401);
    expect(await inUrl.text()).toContain('<form class="sign-in" method="post" action="/yoke/session">');
    const wrong = await fetch(`${base}/yoke/session`, {
      method: 'POST',
      body: new URLSearchParams({ token: 'not-a-token' }),
      redirect: 'manual',
    });
    expect([wrong.status, wrong.headers.get('set-cookie')]).toEqual([401, null]);
    const signIn = await fetch(`${base}/yoke/session`, {
      method: 'POST',
      body: new URLSearchParams({ token: TOKEN }),
      redirect: 'manual',
    });
    expect([signIn.status, signIn.headers.get('location'), signIn.headers.get('referrer-policy')]).toEqual([
      303,
      '/yoke',
      'no-referrer',
    ]);
    const cookie = signIn.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^yoke_session=[\w-]{43}; Path=\/yoke; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
    const pageRes = await fetch(`${base}/yoke`, { headers: { cookie: cookie.split(';')[0]! } });
    expect([pageRes.status, pageRes.headers.get('referrer-policy')]).toEqual([200, 'no-referrer']);
    const page = await pageRes.text();
    expect(page).toContain('<title>yoke fleet</title>');
    expect(page).toContain(
      '<td>afk_auto</td><td><a href="https://github.com/acme/api/issues/1">issue#1</a> <span class="title">Issue 1</span></td>',
    );
    expect(page).not.toContain(TOKEN);
    // Its only script is its own; nothing else may run.
    expect(pageRes.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page).toContain('<script src="/yoke/dashboard.js" defer></script>');
    expect((await fetch(`${base}/yoke/dashboard.js`)).headers.get('content-type')).toBe(
      'text/javascript; charset=utf-8',
    );
    // The part the page fetches to stay current, and a repository's own page, both need the session.
    const part = await fetch(`${base}/yoke?part=main`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(await part.text()).toMatch(
      /^<section id="needs-you"><h2>Needs you<\/h2><p>Nothing needs you.<\/p><\/section>\n<p id="summary">1 live run\(s\)/,
    );
    expect((await fetch(`${base}/yoke?part=main`)).status).toBe(401);
    const repoPage = await fetch(`${base}/yoke/repos/acme/api`, { headers: { cookie: cookie.split(';')[0]! } });
    expect([repoPage.status, (await repoPage.text()).includes('<title>yoke: acme/api</title>')]).toEqual([200, true]);
    expect((await fetch(`${base}/yoke/repos/acme/nope`, { headers: { cookie: cookie.split(';')[0]! } })).status).toBe(
      404,
    );
    // Signing out ends the session.
    await fetch(`${base}/yoke/session/end`, {
      method: 'POST',
      headers: { cookie: cookie.split(';')[0]! },
      redirect: 'manual',
    });
    expect((await fetch(`${base}/yoke`, { headers: { cookie: cookie.split(';')[0]! } })).status).toBe(401);
  });

  it('TR11 signs a person in with their own token, to see only the repositories GitHub says they may read', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    h.forge.addRepo('acme/secret', { budget: { daily_usd: 7 } });
    h.forge.addIssue('acme/secret', 2);
    h.forge.repo('acme/api').permissions.wendy = 'read';
    await h.engine.schedulerTick();
    // What acme/secret spends, and its budget, are not wendy's to read either.
    const secretRun = (await h.store.runs.listLive()).find((r) => r.repo === 'acme/secret')!;
    await h.store.runs.recordReport(
      secretRun.id,
      { outcome: 'success', verdict: null, summary: null, cost: { usd: 3.21, inputTokens: 10, outputTokens: 5 } },
      h.clock.now(),
    );
    const api = await startApi(h, { tokens: [TOKEN], people: [{ login: 'wendy', token: 'wendy-token' }] });
    close = api.close;
    const signIn = await fetch(`${api.url}/yoke/session`, {
      method: 'POST',
      body: new URLSearchParams({ token: 'wendy-token' }),
      redirect: 'manual',
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const get = (path: string) => fetch(`${api.url}${path}`, { headers: { cookie } });
    const page = await (await get('/yoke')).text();
    expect(page).toContain('acme/api');
    expect(page).not.toContain('acme/secret');
    expect(page).not.toContain('issue#2');
    expect(page).not.toContain('3.21');
    expect(page).not.toContain('$7');
    expect((await get('/yoke/repos/acme/api')).status).toBe(200);
    expect((await get('/yoke/repos/acme/secret')).status).toBe(404);
    // The dry run and the set-up check read GitHub as yoke: operators only, with the command a person runs instead.
    const plan = await get('/yoke/repos/acme/api/plan');
    expect([plan.status, mainOf(await plan.text())]).toEqual([
      403,
      '<section><p>This page is for yoke\'s operators. With your own token, run <code>yoke plan acme/api</code> instead. <a href="/yoke">Back</a></p></section>',
    ]);
    // A page that is not there, asked for by the browser of someone signed in: a page that says so, with the way back.
    const nope = await fetch(`${api.url}/yoke/nope`, { headers: { cookie, accept: 'text/html' } });
    expect([nope.status, nope.headers.get('content-type'), mainOf(await nope.text())]).toEqual([
      404,
      'text/html; charset=utf-8',
      '<section><p>yoke has no page at <code>/yoke/nope</code>. The dashboard is at <a href="/yoke">/yoke</a>, a repository\'s at <code>/yoke/repos/OWNER/REPO</code>.</p></section>',
    ]);
    // The same path asked by someone not signed in: the sign-in form; by the CLI (no HTML asked for): JSON, as before.
    const anon = await fetch(`${api.url}/yoke/nope`, { headers: { accept: 'text/html' } });
    expect([anon.status, (await anon.text()).includes('<form class="sign-in"')]).toEqual([401, true]);
    const json = await fetch(`${api.url}/yoke/api/nope`, { headers: { cookie, accept: 'text/html' } });
    expect([json.status, json.headers.get('content-type')]).toEqual([401, 'application/json; charset=utf-8']);
    // Losing read access on GitHub takes the repository off the page at once.
    h.forge.repo('acme/api').permissions.wendy = 'none';
    expect(await (await get('/yoke')).text()).not.toContain('issue#1');
  });
});

describe('the session cookie (TR07)', () => {
  it('TR07 is Secure when yoke is reached over HTTPS, even with no https public URL set: a proxy in front that says so, or TLS of its own', async () => {
    const h = makeHarness();
    const api = await startApi(h, { tokens: [TOKEN], audience: 'http://localhost:3000' });
    close = api.close;
    const signIn = (headers: Record<string, string>) =>
      fetch(`${api.url}/yoke/session`, {
        method: 'POST',
        headers,
        body: new URLSearchParams({ token: TOKEN }),
        redirect: 'manual',
      }).then((r) => r.headers.get('set-cookie')!);
    expect(await signIn({ 'x-forwarded-proto': 'https' })).toMatch(/; Secure$/);
    // Plain http on this machine, as in the sandbox: a Secure cookie would never come back.
    expect(await signIn({})).not.toMatch(/Secure/);
  });
});
