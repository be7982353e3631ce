import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { startApi } from '../helpers/api-server.js';
import { AUTOLAND, addClaimPull, makeHarness } from '../helpers/fleet.js';

// `yoke plan OWNER/REPO`: the next pass as it would go now, for one
// repository, changing nothing. Through the API and the CLI, whole texts.

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

async function setup() {
  const h = makeHarness({ policy: { globalCap: 2 } });
  h.forge.addRepo('acme/api', { ...AUTOLAND, protected_paths: ['deploy/**'] });
  await addClaimPull(h, 'acme/api', { number: 5, issue: 5, headSha: '5555555' });
  h.forge.addIssue('acme/api', 1);
  h.forge.addIssue('acme/api', 2);
  h.forge.addRepo('acme/web', {});
  h.forge.addIssue('acme/web', 1);
  h.forge.repo('acme/api').permissions.reader = 'read';
  const api = await startApi(h, {
    tokens: ['op'],
    people: [
      { login: 'reader', token: 'reader-token' },
      { login: 'stranger', token: 'stranger-token' },
    ],
  });
  close = api.close;
  const cli = async (args: string[], token = 'op') => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      env: { YOKE_URL: api.url, YOKE_TOKEN: token },
      fetch,
    });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  return { h, cli, url: api.url };
}

const PROTECTED =
  "- Protected paths (a claim PR that changes one waits for a writer's approval): .github/**, **/CLAUDE.md, **/CLAUDE.local.md, **/AGENTS.md, **/AGENTS.override.md, .claude/**, .mcp.json, .codex/**, .agents/**, deploy/**.";

describe('yoke plan', () => {
  it('says what the next pass would launch here, in order, what it would leave waiting and why, the cap, the spend and the protected paths; and launches nothing', async () => {
    const { h, cli } = await setup();
    const before = await h.store.runs.listAll();
    expect(await cli(['plan', 'acme/api'])).toEqual({
      code: 0,
      out: [
        'The next pass for acme/api, if it ran now (nothing was started or changed):',
        '- It would launch, in this order:',
        '  1. lander on pr#5 "PR 5": claim PR has no verdict at its head',
        '  2. AFK run on issue#1 "Issue 1": labelled yoke:afk',
        '- It would leave waiting:',
        '  - issue#2 "Issue 2": Waits for a slot: 2 run(s) are live and acme/api may have at most 2 at once. Nothing to do: it starts when a run ends, after work further down the pipeline. To run more at once, raise YOKE_GLOBAL_CAP or YOKE_REPO_CAPS.',
        '- Cap: 2; 0 run(s) live fleet-wide (0 here).',
        '- Spent today (UTC): $0.00 here, no daily limit set here; $0.00 fleet-wide, no fleet limit.',
        PROTECTED,
      ].join('\n'),
      err: '',
    });
    expect(h.launcher.starts).toEqual([]);
    expect(await h.store.runs.listAll()).toEqual(before);
    // The pass that then runs does what the plan said.
    await h.engine.schedulerTick();
    expect(h.launcher.starts.map((s) => `${s.repo.fullName} ${s.subject}`)).toEqual([
      'acme/api pr#5',
      'acme/api issue#1',
    ]);
  });

  it("names the cap another repository's launches take, and prints JSON with --json", async () => {
    const { cli } = await setup();
    const web = await cli(['plan', 'acme/web']);
    expect(web.out.split('\n').slice(1)).toEqual([
      '- It would launch nothing here.',
      '- It would leave waiting:',
      '  - issue#1 "Issue 1": Waits for a slot: 2 run(s) are live and acme/web may have at most 2 at once. Nothing to do: it starts when a run ends, after work further down the pipeline. To run more at once, raise YOKE_GLOBAL_CAP or YOKE_REPO_CAPS.',
      '- Cap: 2; 0 run(s) live fleet-wide (0 here), and this pass would launch 2 in other repositories.',
      '- Spent today (UTC): $0.00 here, no daily limit set here; $0.00 fleet-wide, no fleet limit.',
      "- Protected paths (a claim PR that changes one waits for a writer's approval): .github/**, **/CLAUDE.md, **/CLAUDE.local.md, **/AGENTS.md, **/AGENTS.override.md, .claude/**, .mcp.json, .codex/**, .agents/**.",
    ]);
    const json = JSON.parse((await cli(['plan', 'acme/api', '--json'])).out) as { launches: { subject: string }[] };
    expect(json.launches.map((l) => l.subject)).toEqual(['pr#5', 'issue#1']);
  });

  it('refuses a repository the app cannot see, one that has not opted in, and a person who may not read it, naming why', async () => {
    const { h, cli } = await setup();
    expect(await cli(['plan', 'acme/nope'])).toEqual({
      code: 1,
      out: '',
      err: "yoke's GitHub App is not installed on acme/nope, so yoke cannot see it.\nTo recover: Install the app on acme/nope (the app's page on GitHub, Install App, then pick the repository), and run `yoke doctor acme/nope` to check the rest.",
    });
    h.forge.addRepo('acme/docs', null);
    expect(await cli(['plan', 'acme/docs'])).toEqual({
      code: 1,
      out: '',
      err: 'acme/docs has not opted in to yoke.\nTo recover: Add `.github/yoke.yml` to the default branch of acme/docs (`yoke init --agent claude-code` writes one; docs/configuration.md lists its fields).',
    });
    expect((await cli(['plan', 'acme/api'], 'reader-token')).code).toBe(0);
    const stranger = await cli(['plan', 'acme/api'], 'stranger-token');
    expect(stranger.code).toBe(1);
    expect(stranger.err).toMatch(/^Reading what the next pass would do/);
  });

  it("is on the dashboard: the repository's page links to it, and it shows the same plan, for operators only", async () => {
    const { cli, url } = await setup();
    const text = (await cli(['plan', 'acme/api'])).out;
    const get = (path: string, token?: string) =>
      fetch(`${url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    const page = await get('/yoke/repos/acme/api/plan', 'op');
    expect(page.status).toBe(200);
    const html = await page.text();
    const pre = /<pre class="plan">([\s\S]*?)<\/pre>/.exec(html)?.[1];
    expect(pre?.replaceAll('&quot;', '"').replaceAll('&#39;', "'")).toBe(text);
    expect((await get('/yoke/repos/acme/api/plan')).status).toBe(401);
    const missing = await get('/yoke/repos/acme/nope/plan', 'op');
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('yoke&#39;s GitHub App is not installed on acme/nope');
  });
});
