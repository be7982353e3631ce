import { TEST_CLI } from '../helpers/bundles-global.js';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startApi } from '../helpers/api-server.js';
import { makeHarness } from '../helpers/fleet.js';
import { liveRun } from '../helpers/run-api.js';
import { time } from '../../src/http/pages/dashboard-parts.js';

// The CLI's errors as a newcomer meets them: the real `yoke` as a child
// process, whole messages compared. A bad argument is named before any request.

// The CLI as one module, built once for the run (test/helpers/bundles-global.ts).
const BIN = TEST_CLI;
const TOKEN = 'op-token-0123456789abcdef0123456789';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

function yoke(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', YOKE_TOKEN: TOKEN, ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) => done({ code, out: out.trimEnd(), err: err.trimEnd() }));
  });
}

/** Something on a port that is not yoke: GitHub's own 404 shape. */
async function notYoke(): Promise<string> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"message":"Not Found"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('the CLI, as a newcomer meets it', () => {
  it('names a bad argument before sending anything', async () => {
    // Nothing listens here: a request would fail differently.
    const env = { YOKE_URL: 'http://127.0.0.1:9' };
    expect(await yoke(['repo', 'start', 'acme/demo', 'twelve'], env)).toEqual({
      code: 1,
      out: '',
      err: '<issue> is "twelve", which is not a number: name it by its number, e.g. 12.',
    });
    expect(await yoke(['repo', 'start', 'demo', '1'], env)).toEqual({
      code: 1,
      out: '',
      err: '<owner/repo> is "demo", which is not owner/repo, e.g. acme/api.',
    });
    expect(await yoke(['deployment-runs', 'create', 'acme/demo', '--commit', 'nothex'], env)).toEqual({
      code: 1,
      out: '',
      err: '--commit is "nothex", which is not a commit SHA (4 to 40 hexadecimal characters); `git rev-parse HEAD` prints one.',
    });
  });

  it("says what is wrong with YOKE_URL: no scheme, yoke's own path, or a server that is not yoke", async () => {
    expect(await yoke(['fleet', 'report'], { YOKE_URL: 'localhost:34891' })).toEqual({
      code: 1,
      out: '',
      err: 'YOKE_URL must start with http:// or https://: "localhost:34891" has neither. Set it to http://localhost:34891, say.',
    });
    expect(await yoke(['fleet', 'report'], { YOKE_URL: 'http://localhost:34891/yoke' })).toEqual({
      code: 1,
      out: '',
      err: "YOKE_URL is yoke's base URL, without /yoke: set it to http://localhost:34891.",
    });
    const other = await notYoke();
    expect(await yoke(['fleet', 'report'], { YOKE_URL: other })).toEqual({
      code: 1,
      out: '',
      err: `${other} answered 404 to GET /yoke/api/fleet without yoke's error body: it does not look like yoke. Check YOKE_URL or --url (yoke answers GET /yoke/api/health).`,
    });
  });

  it('says a token yoke did not take in the CLI’s words: where the token comes from, not an HTTP header', async () => {
    const h = makeHarness();
    const api = await startApi(h, { tokens: [TOKEN] });
    closers.push(api.close);
    expect(await yoke(['fleet', 'report'], { YOKE_URL: api.url, YOKE_TOKEN: 'not-a-token-of-this-yoke' })).toEqual({
      code: 1,
      out: '',
      err: `yoke at ${api.url} did not take this token (YOKE_TOKEN or --token): it is none of the server's YOKE_API_TOKENS or YOKE_PERSON_TOKENS.\nTo recover: set YOKE_TOKEN to one of them (ask whoever runs yoke for yours), or pass --token.`,
    });
  });

  it('has `repo status` (a repository named in any casing) and `deployment-runs list`', async () => {
    const h = makeHarness();
    await h.store.repos.ensure('acme/api', 1, h.clock.now());
    h.forge.addRepo('acme/api', {});
    const api = await startApi(h, { tokens: [TOKEN] });
    closers.push(api.close);
    const status = await yoke(['repo', 'status', 'acme/api'], { YOKE_URL: api.url });
    // Plain text for a terminal: no Markdown's ** around the heading, a run id as itself.
    expect(status).toEqual({
      code: 0,
      out: [
        'yoke status for acme/api',
        '- auto loop: on',
        '- consecutive AFK failures: 0; it pauses at 3',
        '- cap: 2; live runs fleet-wide: 0',
        '- autoland: off; fix-forward: off',
      ].join('\n'),
      err: '',
    });
    // GitHub's names do not care for case, nor does yoke: the answer is under the name yoke keeps.
    expect(await yoke(['repo', 'status', 'ACME/Api'], { YOKE_URL: api.url })).toEqual(status);
    // A name yoke has never seen: `repo status` and `plan` say the same, and what to do.
    const wrongStatus = await yoke(['repo', 'status', 'acme/nope'], { YOKE_URL: api.url });
    const wrongPlan = await yoke(['plan', 'acme/nope'], { YOKE_URL: api.url });
    expect(wrongStatus).toEqual({
      code: 1,
      out: '',
      err: "yoke's GitHub App is not installed on acme/nope, so yoke cannot see it.\nTo recover: Install the app on acme/nope (the app's page on GitHub, Install App, then pick the repository), and run `yoke doctor acme/nope` to check the rest.",
    });
    expect(wrongPlan).toEqual(wrongStatus);
    expect(await yoke(['deployment-runs', 'list'], { YOKE_URL: api.url })).toEqual({
      code: 0,
      out: 'No deployment runs. Start one with `yoke deployment-runs create OWNER/REPO`.',
      err: '',
    });
  });

  it('lists runs with why each failed, and gets one', async () => {
    const h = makeHarness();
    const id = await liveRun(h, { issue: 14, secret: 's' });
    await h.store.runs.recordReport(
      id,
      { outcome: 'failure', verdict: null, summary: 'Error: issue #14 names no demo task\nmore detail', cost: null },
      h.clock.now(),
    );
    await h.store.runs.end(id, 'failure', null, h.clock.now());
    const api = await startApi(h, { tokens: [TOKEN] });
    closers.push(api.close);
    expect(await yoke(['runs', 'list', '--status', 'failure'], { YOKE_URL: api.url })).toEqual({
      code: 0,
      out: `${id} · acme/api afk_auto issue#14 · failure · Error: issue #14 names no demo task`,
      err: '',
    });
    expect(await yoke(['runs', 'list', '--status', 'broken'], { YOKE_URL: api.url })).toEqual({
      code: 1,
      out: '',
      err: '--status is "broken", which is not one of live, success, failure, timeout, cancelled.',
    });
    expect(await yoke(['runs', 'get', 'nope'], { YOKE_URL: api.url })).toEqual({
      code: 1,
      out: '',
      err: 'There is no run nope.\nTo recover: `yoke runs list` shows the runs yoke knows, newest first, with their ids.',
    });
    // A person's view, times in UTC, what it reported at the end; --json for the whole record.
    const r = (await h.store.runs.get(id))!;
    expect(await yoke(['runs', 'get', id], { YOKE_URL: api.url })).toEqual({
      code: 0,
      out: [
        `${id} · acme/api afk_auto issue#14 · failure`,
        `launched  ${time(r.launchedAt)}, ended ${time(r.endedAt)} (took 0s); deadline ${time(r.budgetDeadline)}`,
        `launcher  ${r.launcher}${r.launcherRef ? ` ${r.launcherRef}` : ''}`,
        '',
        'what it reported:',
        '  Error: issue #14 names no demo task',
        '  more detail',
      ].join('\n'),
      err: '',
    });
    const got = await yoke(['runs', 'get', id, '--json'], { YOKE_URL: api.url });
    expect([got.code, JSON.parse(got.out).summary]).toEqual([0, 'Error: issue #14 names no demo task\nmore detail']);
  });

  it('BU02 settles what a run that ended without a report spent: a bad amount is named before any request, a person token is refused, and `runs get` shows who settled it', async () => {
    const h = makeHarness();
    await h.store.runs.insertIfRoom(
      {
        id: 'r-died',
        repo: 'acme/api',
        kind: 'afk_auto',
        subject: 'issue#3',
        issueNumber: 3,
        prNumber: null,
        headSha: null,
        launchedAt: h.clock.now(),
        budgetDeadline: h.clock.now() + 60_000,
        launcher: 'command',
        launcherRef: null,
        secretHash: null,
        capAtLaunch: 2,
        reservedUsd: 5,
      },
      2,
      false,
    );
    await h.store.runs.end('r-died', 'failure', 'it ended without reporting a result', h.clock.now());
    const api = await startApi(h, { tokens: [TOKEN], people: [{ login: 'mo', token: 'mo-person-token-0123456789' }] });
    closers.push(api.close);
    const env = { YOKE_URL: api.url };
    const before = await yoke(['runs', 'get', 'r-died'], env);
    expect(before.out.split('\n')[2]).toBe(
      'cost      unsettled: it reported none, so the budgets hold its reservation of $5.00 (`yoke runs settle r-died --usd N`)',
    );
    expect(await yoke(['runs', 'settle', 'r-died', '--usd', '1,50'], env)).toEqual({
      code: 1,
      out: '',
      err: '--usd is "1,50", which is not an amount of dollars. Give what the run spent, in dollars, from 0 up (e.g. `--usd 1.25`), as your model provider\'s usage page shows it.',
    });
    expect(
      await yoke(['runs', 'settle', 'r-died', '--usd', '1.5'], { ...env, YOKE_TOKEN: 'mo-person-token-0123456789' }),
    ).toEqual({
      code: 1,
      out: '',
      err: "Settling what a run spent is for yoke's operators, and this request carries a person token.\nTo recover: Send it with an operator token from YOKE_API_TOKENS; a person token reaches one repository's routes (`yoke repo status OWNER/REPO`, `yoke runs list --repo OWNER/REPO`).",
    });
    expect(await yoke(['runs', 'settle', 'r-died', '--usd', '1.5'], env)).toEqual({
      code: 0,
      out: 'Settled run r-died (acme/api afk_auto issue#3) at $1.50: the budgets held $5.00 for it, its reservation, and now hold $1.50.',
      err: '',
    });
    const after = await yoke(['runs', 'get', 'r-died'], env);
    expect(after.out.split('\n')[2]).toBe(
      `cost      $1.50, settled by operator at ${time(h.clock.now())} (it reported none)`,
    );
  });

  it('TR33 BU06 lists why each fix run started, and what each run that reported a cost spent for its issue', async () => {
    const h = makeHarness();
    const at = h.clock.now();
    for (const [id, why] of [
      ['fix-1', 'a lander rejection'],
      ['fix-2', 'a review by @maint; a command by @lead'],
    ] as const) {
      await h.store.runs.insert({
        id,
        repo: 'acme/api',
        kind: 'fix',
        subject: 'pr#7',
        issueNumber: 1,
        prNumber: 7,
        headSha: 'c'.repeat(40),
        launchedAt: at + Number(id.at(-1)),
        budgetDeadline: at + 60_000,
        launcher: 'command',
        launcherRef: null,
        secretHash: null,
        capAtLaunch: 2,
        liveAtLaunch: 1,
      });
      await h.store.asks.carry(id, why, [], 'acme/api');
      if (id === 'fix-2')
        await h.store.runs.recordReport(
          id,
          { outcome: 'success', verdict: null, summary: null, cost: { usd: 0.42, inputTokens: 10, outputTokens: 5 } },
          at + 5,
        );
      await h.store.runs.end(id, 'success', null, at + 10);
    }
    const api = await startApi(h, { tokens: [TOKEN] });
    closers.push(api.close);
    expect(await yoke(['runs', 'list'], { YOKE_URL: api.url })).toEqual({
      code: 0,
      out: [
        'fix-2 · acme/api fix pr#7 (for a review by @maint; a command by @lead) · success · $0.42 (for #1)',
        'fix-1 · acme/api fix pr#7 (for a lander rejection) · success',
        'what each issue has cost so far:',
        '  acme/api#1: $0.42 over 1 run(s) (AFK $0.00, fixes $0.42, landers $0.00), 10 input and 5 output tokens',
      ].join('\n'),
      err: '',
    });
  });
});
