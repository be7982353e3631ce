/// <reference lib="dom" />
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The web dashboard in headless Chromium, against the very page
// `npm run sandbox -- --keep-running` prints: the demo runs to the end
// (merges and delivery), then the browser signs in and checks what a
// maintainer would see. Chromium comes from Debian (`apt-get install -y
// chromium`); .ci/run installs it and sets YOKE_REQUIRE_BROWSER, so in CI
// these tests never skip.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser) {
  if (process.env.YOKE_REQUIRE_BROWSER) throw new Error(`Chromium is not at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH).`);
  console.warn(`The dashboard browser tests are skipped: no Chromium at ${CHROMIUM}. Install it with \`apt-get install -y chromium\`, or set CHROMIUM_PATH.`);
}

const HOSTILE = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> & "quotes"`;

let child: ChildProcess;
let browser: Browser;
let page: Page;
let printed = '';
let forgeUrl = '';
let dashboardUrl = '';
let operatorToken = '';
let forgeToken = '';
const navigations: string[] = [];

const forgeApi = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
  const res = await fetch(`${forgeUrl}/api/v3/repos/acme/demo${path}`, {
    method,
    headers: { authorization: `token ${forgeToken}`, accept: 'application/vnd.github+json', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await res.json()) as T;
};

beforeAll(async () => {
  if (!haveBrowser) return;
  child = spawn('npm', ['run', 'sandbox', '--', '--keep-running'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (c: Buffer) => (printed += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (printed += c.toString()));
  const deadline = Date.now() + 160_000;
  while (!/^Dashboard: /m.test(printed)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the sandbox did not print its dashboard:\n${printed}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const dash = /^Dashboard: (\S+) \(sign in with the operator token (\S+)\)$/m.exec(printed)!;
  [dashboardUrl, operatorToken] = [dash[1]!, dash[2]!];
  forgeUrl = /^forge:\s+(\S+) /m.exec(printed)![1]!;
  forgeToken = /use their personal token (\S+):/.exec(printed)![1]!;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage();
  page.on('framenavigated', (f) => {
    if (f === page.mainFrame()) navigations.push(f.url());
  });
  await page.goto(dashboardUrl);
  await page.fill('input[name=token]', operatorToken);
  await Promise.all([page.waitForURL(dashboardUrl), page.click('button')]);
}, 200_000);

afterAll(async () => {
  await browser?.close();
  if (child?.pid) {
    try {
      process.kill(-child.pid, 'SIGINT');
    } catch {
      // already gone
    }
  }
}, 40_000);

describe.skipIf(!haveBrowser)('the web dashboard in Chromium', () => {
  it('renders the sandbox fleet: the repository, every run, and the deployment run with its stages and members', async () => {
    expect(printed).toMatch(/5 of 5 issues merged, 5 delivered and closed out/);
    // What the CLI needs to reach this sandbox, as lines to paste.
    expect(printed).toContain(`export YOKE_URL=${dashboardUrl.replace(/\/yoke$/, '')} YOKE_TOKEN=${operatorToken}`);
    expect(await page.title()).toBe('yoke fleet');
    const fleet = (await (await fetch(`${dashboardUrl}/api/fleet`, { headers: { authorization: `Bearer ${operatorToken}` } })).json()) as { recentRuns: { id: string }[] };
    expect(await page.locator('#repos tr td:first-child a').allTextContents()).toEqual(['acme/demo']);
    expect(await page.locator('#runs tr code').allTextContents()).toEqual(fleet.recentRuns.map((r) => r.id));
    const deployment = page.locator('#deployments article.deployment');
    expect(await deployment.count()).toBe(1);
    expect(await deployment.locator('.stage').allTextContents()).toEqual(['staging deploy · succeeded', 'staging-qa qa · settled', 'production deploy · succeeded']);
    expect(await deployment.locator('ul').first().locator('li').count()).toBe(5);
  });

  it('links point where they should: issues, PRs and workflow runs on the forge, repositories to their page', async () => {
    const issues = await forgeApi<{ number: number; pull_request?: unknown }[]>('GET', '/issues?state=all&per_page=100');
    const kinds = new Map(issues.map((i) => [i.number, i.pull_request ? 'pull' : 'issues']));
    const wfRuns = (await forgeApi<{ workflow_runs: { id: number; display_title: string }[] }>('GET', '/actions/workflows/yoke-run.yml/runs?per_page=100')).workflow_runs;
    const hrefs = await page.locator('main a').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).getAttribute('href')!));
    expect(hrefs.length).toBeGreaterThan(20);
    for (const href of hrefs) {
      if (href.startsWith('?span=')) {
        expect(['?span=fit', '?span=24h', '?span=6h', '?span=1h', '?span=10m']).toContain(href);
        continue;
      }
      if (href.startsWith('/yoke/repos/')) {
        expect(href).toBe('/yoke/repos/acme/demo');
        continue;
      }
      const m = new RegExp(`^${forgeUrl}/acme/demo/(issues|pull|actions/runs)/(\\d+)$`).exec(href);
      expect(m, href).not.toBeNull();
      const [, kind, n] = m!;
      if (kind === 'actions/runs') expect(wfRuns.some((w) => w.id === Number(n)), href).toBe(true);
      else expect(kinds.get(Number(n)), href).toBe(kind);
    }
    // Each run's row links its own work and its own workflow run.
    const rows = await page.locator('#runs tr').evaluateAll((trs) =>
      trs.slice(1).map((tr) => ({
        id: tr.querySelector('code')!.textContent!,
        subject: tr.children[3]!.querySelector('a')!.textContent!,
        work: tr.children[3]!.querySelector('a')!.getAttribute('href')!,
        workflow: tr.children[5]!.querySelector('a')?.getAttribute('href') ?? null,
      })),
    );
    for (const r of rows) {
      const [kind, n] = r.subject.split('#') as [string, string];
      expect(r.work).toBe(`${forgeUrl}/acme/demo/${kind === 'pr' ? 'pull' : 'issues'}/${n}`);
      const wf = wfRuns.find((w) => w.display_title.endsWith(`(${r.id})`))!;
      expect(r.workflow).toBe(`${forgeUrl}/acme/demo/actions/runs/${wf.id}`);
    }
    // Every link leads to a page of the forge that shows the thing linked.
    for (const href of new Set(hrefs.filter((h) => h.startsWith(forgeUrl)))) {
      const res = await fetch(href);
      const html = await res.text();
      expect(res.status, href).toBe(200);
      const n = href.split('/').pop()!;
      expect(html, href).toContain(href.includes('/actions/runs/') ? `<small>run ${n}</small>` : `<small>#${n}</small>`);
    }
  });

  it("following a claim PR's link shows its verdict marker, its yoke/lander check run and the merge, as a person reads them", async () => {
    const pr = page.locator('#runs tr td:nth-child(4) a', { hasText: 'pr#' }).first();
    const href = (await pr.getAttribute('href'))!;
    const view = await browser.newPage();
    await view.goto(href);
    expect(await view.locator('h1 small').textContent()).toBe(`#${href.split('/').pop()}`);
    expect(await view.locator('.comment pre').allTextContents()).toContainEqual(expect.stringContaining('yoke:verdict'));
    expect(await view.locator('ul.checks li').allTextContents()).toContainEqual(expect.stringMatching(/^yoke\/lander: completed \((success|failure)\)/));
    expect(await view.locator('p', { hasText: 'merged' }).count()).toBeGreaterThan(0);
    await view.goto(`${forgeUrl}/acme/demo/issues`);
    expect(await view.locator('table tr').count()).toBeGreaterThan(5);
    await view.close();
  });

  it('the timeline shows each run in a slot, and never more at once than the cap', async () => {
    const svg = page.locator('svg#timeline');
    const cap = Number(await svg.getAttribute('data-cap'));
    expect(cap).toBe(2);
    const bars = await svg.locator('rect.bar').evaluateAll((rs) => rs.map((r) => ({ slot: Number(r.getAttribute('data-slot')), start: Number(r.getAttribute('data-start')), end: Number(r.getAttribute('data-end')), cls: r.getAttribute('class')! })));
    expect(bars.length).toBe(await page.locator('#runs tr').count() - 1);
    expect(Math.max(...bars.map((b) => b.slot))).toBeLessThan(cap);
    expect(await svg.locator('.over-cap').count()).toBe(0);
    const most = Math.max(...bars.map((b) => bars.filter((o) => o.start <= b.start && b.start < o.end).length));
    expect(most).toBeLessThanOrEqual(cap);
    // Two bars in one slot never overlap.
    for (const a of bars) for (const b of bars) if (a !== b && a.slot === b.slot) expect(a.end <= b.start || b.end <= a.start).toBe(true);
    // Coloured by kind: landers and AFK runs both appear.
    expect(bars.some((b) => b.cls.includes('kind-lander'))).toBe(true);
    expect(bars.some((b) => b.cls.includes('kind-afk_auto'))).toBe(true);
  });

  it('updates itself without a reload, and a hostile issue title stays text', async () => {
    const before = navigations.length;
    await forgeApi('POST', '/issues', { title: HOSTILE, body: 'Names no demo task.', labels: ['yoke:afk'] });
    // yoke launches a run for it; the open page shows it within a refresh or two.
    const title = page.locator('#runs .title', { hasText: 'window.__pwned' });
    await title.first().waitFor({ timeout: 30_000 });
    expect(await title.first().textContent()).toBe(HOSTILE);
    expect(navigations.length).toBe(before);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
  });

  it('has a page per repository, linking to it on GitHub', async () => {
    await Promise.all([page.waitForURL(`${dashboardUrl}/repos/acme/demo`), page.locator('#repos a', { hasText: 'acme/demo' }).click()]);
    expect(await page.title()).toBe('yoke: acme/demo');
    expect(await page.locator('main h2 a', { hasText: 'on GitHub' }).getAttribute('href')).toBe(`${forgeUrl}/acme/demo`);
    expect(await page.locator('#runs tr').count()).toBeGreaterThan(5);
  });
});
