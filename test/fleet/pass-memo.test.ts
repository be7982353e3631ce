import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AUTOLAND, defaultPolicy, makeHarness, type Harness } from '../helpers/fleet.js';
import { testEngine } from '../helpers/test-store.js';
import { silentLog } from '../../src/kernel/log.js';
import { CheckRefusals } from '../../src/fleet/landing/check-runs.js';
import { gatherPass, type Gathered } from '../../src/fleet/spawn/gather.js';
import { mayKeep, PassMemo } from '../../src/fleet/spawn/pass-memo.js';
import { parseRepoConfig } from '../../src/config/repo-config.js';
import { unseenRepoState } from '../../src/fleet/repo-state.js';
import type { RepoFacts } from '../../src/fleet/repo-facts.js';
import type { Ask } from '../../src/store/fleet/asks.js';

// SC10: a pass costs what changed. A repository whose store rows and view stand since the last pass is not read
// from the store nor derived again; a write to any of its rows, from anywhere, makes the next pass read it again.
// Whatever was taken again, the pass decides as one that derived everything afresh would.

// Dashboard issues aside: their sweep reads what it writes from the store each pass (issue 62 says where that stands).
const CONFIG = { auto: true, dashboard_issue: false, ...AUTOLAND };

/** A fleet of `n` repositories, read once by a pass. */
async function fleetOf(n: number, globalCap = 3): Promise<Harness> {
  const h = makeHarness({ policy: { globalCap } });
  for (let i = 0; i < n; i++) h.forge.addRepo(`acme/r${i}`, CONFIG);
  await h.registered;
  await h.engine.schedulerTick();
  return h;
}

/** The statements `what` sends to the store that name repositories by a list, with the names each lists. */
async function listedReads(h: Harness, what: () => Promise<unknown>): Promise<{ text: string; names: string[] }[]> {
  const seen: { text: string; names: string[] }[] = [];
  const sql = h.store.sql;
  const all = sql.all.bind(sql);
  sql.all = (shape, text, params) => {
    if (/ IN \(/.test(text) && /\b(repo|full_name) IN/.test(text))
      seen.push({ text: text.split('\n')[0]!, names: (JSON.parse(String(params?.[0])) as string[]).sort() });
    return all(shape, text, params);
  };
  try {
    await what();
  } finally {
    sql.all = all;
  }
  return seen;
}

describe('SC10 a pass takes again what did not change', () => {
  it('SC10 a pass over repositories where nothing changed reads none of their rows: no list of repositories goes to the store', async () => {
    const h = await fleetOf(12);
    // The first pass recorded what it read; the second finds the records as they are.
    await h.engine.schedulerTick();
    expect(await listedReads(h, () => h.engine.schedulerTick())).toEqual([]);
  });

  it("SC10 a write to one repository's rows makes the next pass read that repository's rows again, and only its", async () => {
    const h = await fleetOf(12);
    await h.engine.schedulerTick();
    const writes: [string, () => Promise<unknown>][] = [
      ['its row', () => h.store.repos.setAutoLoop('acme/r3', false, 1)],
      [
        'an AFK label',
        () =>
          h.store.afkLabels.record({
            repo: 'acme/r4',
            issueNumber: 9,
            bodyDigest: 'b',
            labelledBy: 'maint',
            recordedAt: 1,
          }),
      ],
    ];
    for (const [what, write] of writes) {
      await write();
      const reads = await listedReads(h, () => h.engine.schedulerTick());
      const repo = what === 'its row' ? 'acme/r3' : 'acme/r4';
      expect(reads.length, what).toBeGreaterThan(0);
      expect(new Set(reads.flatMap((r) => r.names)), what).toEqual(new Set([repo]));
    }
  });
});

/** What a change to the fleet may be, from the forge's side or the store's. */
const opArb = fc.oneof(
  fc.record({ kind: fc.constant('label' as const), repo: fc.nat(1), issue: fc.integer({ min: 1, max: 2 }) }),
  fc.record({ kind: fc.constant('close' as const), repo: fc.nat(1), issue: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('pause' as const), repo: fc.nat(1) }),
  fc.record({ kind: fc.constant('reset' as const), repo: fc.nat(1) }),
  fc.record({ kind: fc.constant('end' as const), which: fc.nat(2) }),
  fc.record({ kind: fc.constant('issue' as const), repo: fc.nat(1), issue: fc.constant(3) }),
  fc.record({ kind: fc.constant('request' as const), repo: fc.nat(1), issue: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('drop' as const), which: fc.nat(2) }),
  fc.record({ kind: fc.constant('pass' as const) }),
);
type Op = typeof opArb extends fc.Arbitrary<infer T> ? T : never;

async function apply(h: Harness, op: Op): Promise<void> {
  const repo = 'repo' in op ? `acme/r${op.repo}` : '';
  switch (op.kind) {
    case 'label': {
      const issue = h.forge.repo(repo).issues.find((i) => i.number === op.issue);
      if (issue) Object.assign(issue, { open: true, labels: ['yoke:afk'] });
      else h.forge.addIssue(repo, op.issue);
      return;
    }
    case 'close': {
      const issue = h.forge.repo(repo).issues.find((i) => i.number === op.issue);
      if (issue) issue.open = false;
      return;
    }
    case 'pause':
      await h.store.repos.addFailure(repo, 1, h.clock.now());
      return;
    case 'reset':
      await h.store.repos.unpause(repo, h.clock.now());
      return;
    case 'end': {
      const live = await h.store.runs.listLive();
      const run = live[op.which % Math.max(1, live.length)];
      if (run) await h.store.runs.end(run.id, 'failure', 'ended in the test', h.clock.now());
      return;
    }
    case 'issue': // open, without the AFK label: only a writer's `/yoke start` starts it
      if (!h.forge.repo(repo).issues.some((i) => i.number === op.issue)) h.forge.addIssue(repo, op.issue, []);
      return;
    case 'request':
      await h.store.requests.add(repo, 'start', op.issue, 'maint', h.clock.now());
      return;
    case 'drop': {
      const open = await h.store.requests.listOpen();
      const request = open[op.which % Math.max(1, open.length)];
      if (request) await h.store.requests.drop(request.id);
      return;
    }
    case 'pass':
      await h.engine.schedulerTick();
      return;
  }
}

/** A pass's read half over the harness's store and forge, with `memo` or without one (all derived afresh). */
function gathered(h: Harness, memo?: PassMemo): Promise<Gathered> {
  return gatherPass({
    store: h.store,
    forge: h.forge,
    launcher: h.launcher,
    clock: h.clock,
    log: silentLog,
    policy: defaultPolicy({ globalCap: 1 }),
    apiUrl: 'http://yoke.test',
    webUrl: 'https://github.test',
    checkRefusals: new CheckRefusals(60_000),
    newRunId: () => 'unused',
    trustedLogins: async () => new Set(['yoke[bot]']),
    ...(memo ? { memo } : {}),
  });
}

/** What a pass decides from what it gathered: its candidates, what waits and why, what it would write. */
async function decisions(h: Harness, memo?: PassMemo) {
  const g = await gathered(h, memo);
  return {
    candidates: g.candidates.map((c) => `${c.stage} ${c.repo} ${c.subject} ${c.kind}`).sort(),
    waiting: g.waiting.map((w) => `${w.stage} ${w.repo} ${w.subject} ${w.reason.code}`).sort(),
    housekeeping: g.housekeeping.map((k) => JSON.stringify(k)).sort(),
  };
}

describe('SC10 what a pass takes again is what it would derive afresh', () => {
  it('SC10 after any changes, from the forge or the store, a pass that keeps what stood decides as one that keeps nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 12 }), async (ops) => {
        // One run at a time: most labelled issues stay candidates, so what a change does to them shows.
        const h = await fleetOf(3, 1);
        const memo = new PassMemo();
        for (const op of ops) {
          await apply(h, op);
          h.clock.advance(1_000);
          expect(await decisions(h, memo)).toEqual(await decisions(h));
        }
      }),
      // Each run is a database of its own: on PostgreSQL, fewer.
      { numRuns: testEngine === 'PostgreSQL' ? 15 : 100 },
    );
  });
});

describe('SC10 what is never taken again', () => {
  const REPO = { owner: 'acme', name: 'api', fullName: 'acme/api', installationId: 1 };
  const parsed = parseRepoConfig(CONFIG);
  if (parsed.state !== 'valid') throw new Error('the test config does not parse');
  const issue = {
    number: 1,
    title: 'one',
    labels: ['yoke:afk'],
    author: 'maint',
    assignee: null,
    bodyDigest: 'b',
    digest: 'd',
  };
  const pull = {
    number: 7,
    title: 'pr',
    body: 'Closes #1',
    headSha: 'a'.repeat(40),
    headRef: 'yoke/7',
    baseRef: 'main',
    headRepo: REPO.fullName,
    labels: ['yoke:claim'],
    draft: false,
    author: 'yoke[bot]',
    closes: [1],
    yokeRun: 'run-7',
  };
  const idle: RepoFacts = {
    repo: REPO,
    state: unseenRepoState(REPO, 1),
    config: parsed.config,
    view: {
      repo: REPO,
      defaultBranch: 'main',
      config: parsed,
      issues: [issue],
      pulls: [],
      claims: [],
      recentComments: [],
    },
    runs: [],
    claims: new Map(),
    asks: [],
    requests: [],
    startableIssues: new Map(),
    issueGraph: new Map(),
    trustedLogins: new Set(),
    liveSubjects: new Set(),
    spentToday: { repo: 0, fleet: 0 },
    fleetDailyUsd: null,
    pauseThreshold: 3,
  };
  const ask = { id: 1, repo: REPO.fullName, kind: 'fix', number: 7 } as Ask;

  it('SC10 facts with claims, an issue started by request, asks, a blocked issue or a write found are derived afresh each pass', () => {
    expect(mayKeep(idle, [])).toBe(true);
    const each: [string, RepoFacts, readonly unknown[]][] = [
      [
        'a claim PR (its base tip is read every pass)',
        { ...idle, view: { ...idle.view, pulls: [pull], claims: [{ pull, comments: [], reviews: [], files: [] }] } },
        [],
      ],
      ['an issue started by request, read on its own', { ...idle, startableIssues: new Map([[4, 'd4']]) }, []],
      ["an ask (its asker's permission is asked again)", { ...idle, asks: [ask] }, []],
      [
        'a blocked issue (its blockers are listed every pass)',
        { ...idle, view: { ...idle.view, issues: [{ ...issue, graph: { blockedBy: 1, openSubIssues: 0 } }] } },
        [],
      ],
      ['a write found', idle, [{ type: 'clear_disabled', repo: REPO.fullName }]],
    ];
    for (const [what, facts, wrote] of each) expect(mayKeep(facts, wrote as never), what).toBe(false);
  });
});
