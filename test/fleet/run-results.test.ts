import { beforeEach, describe, expect, it } from 'vitest';
import { resultAudience } from '../../src/agent/result-document.js';
import { collectHandedResult } from '../../src/fleet/runs/run-results.js';
import { ActionsLauncher, formatActionsRef } from '../../src/launcher/actions.js';
import { reapRuns } from '../../src/fleet/runs/reaper.js';
import { repoRefOf } from '../../src/fleet/repo-state.js';
import { OidcVerifier } from '../../src/http/api/oidc.js';
import { silentLog } from '../../src/kernel/log.js';
import { writeZip } from '../../sandbox/forge/zip-writer.js';
import { makeHarness, type Harness } from '../helpers/fleet.js';
import { AUDIENCE, ISSUER, LANDER_HEAD, WF, good, jwk, jwt, liveRun } from '../helpers/run-api.js';

// TR32: a result handed back through GitHub (YOKE_RUNS_REACH=github) is read
// from the dispatched workflow run's `yoke-result` artifact once that run has
// completed, and believed only with a token bound to exactly that run, issued
// while it was live, whose audience carries the sha256 of the result's exact text.

let h: Harness;
let verifier: OidcVerifier;
/** BU02: the ended runs the reaper read for their spend already (the engine keeps one such set). */
let spendRead: Set<string>;
const WF_ID = WF.id;
const REF = `yoke-run.yml@main#${WF_ID}`;

beforeEach(() => {
  spendRead = new Set();
  h = makeHarness();
  h.forge.addRepo('acme/api', {});
  verifier = new OidcVerifier({
    issuer: ISSUER,
    jwksUrl: `${ISSUER}/.well-known/jwks`,
    audience: AUDIENCE,
    now: h.clock.now,
    fetch: (async () => new Response(JSON.stringify({ keys: [jwk] }), { status: 200 })) as typeof fetch,
  });
});

const seconds = () => Math.floor(h.clock.now() / 1000);

/** The workflow run yoke dispatched for `runId`, completed now. */
function completed(
  runId: string,
  over: Partial<Omit<typeof WF, 'conclusion'>> & { conclusion?: string; updatedAt?: number } = {},
) {
  h.forge.workflowRuns.set(runId, {
    ...WF,
    status: 'completed',
    conclusion: 'success',
    updatedAt: h.clock.now(),
    ...over,
  });
}

/** A result document as the runner writes it; `token` replaces the genuine one, `text` the signed text. */
function handBack(
  workflowRunId: number,
  result: Record<string, unknown>,
  opts: { claims?: Record<string, unknown>; token?: string | null; text?: string; name?: string } = {},
) {
  const signed = JSON.stringify(result);
  const token =
    opts.token === undefined
      ? jwt({ ...good(seconds()), aud: resultAudience(AUDIENCE, signed), ...opts.claims })
      : opts.token;
  const doc = token === null ? { result: opts.text ?? signed } : { result: opts.text ?? signed, token };
  const zip = writeZip([{ name: 'result.json', data: Buffer.from(JSON.stringify(doc)) }]);
  const list = h.forge.artifacts.get(workflowRunId) ?? [];
  list.push({ id: 9000 + list.length + workflowRunId, name: opts.name ?? 'yoke-result', zip });
  h.forge.artifacts.set(workflowRunId, list);
}

const ctx = () => ({ ...h.fleet, verifier, audience: AUDIENCE });

async function reap() {
  return reapRuns(
    {
      store: h.store,
      launcher: new ActionsLauncher({
        forge: h.forge,
        now: h.clock.now,
        unseenGraceMs: 600_000,
        runner: async () => ({ code: '', sha256: 'e'.repeat(64) }),
        reach: 'github',
      }),
      clock: h.clock,
      log: silentLog,
    },
    {
      pauseThreshold: 3,
      repoRef: (name) => repoRefOf(h.store, name),
      collect: (run, repo, id) => collectHandedResult(ctx(), run, repo, id),
      spendRead,
    },
  );
}

const verdict = (runId: string) => ({
  run_id: runId,
  outcome: 'success',
  verdict: 'accept',
  head_sha: LANDER_HEAD,
  summary: 'The validation job passed.',
});

describe('results handed back through GitHub (TR32)', () => {
  it('TR32 records a lander verdict from the dispatched run’s artifact, with a token bound to the run and the result’s sha256', async () => {
    const id = await liveRun(h, { kind: 'lander', secret: null, ref: REF });
    completed(id);
    handBack(WF_ID, verdict(id));
    const [r] = await reap();
    expect([r!.outcome, r!.reason]).toEqual(['success', null]);
    const run = (await h.store.runs.get(id))!;
    expect([run.verdict, run.summary]).toEqual(['accept', 'The validation job passed.']);
  });

  it('TR32 a result whose text changed after it was signed, one with no token, one naming another run, and one with another run’s token change nothing', async () => {
    const cases: [string, (id: string) => void, RegExp][] = [
      [
        'edited',
        (id) =>
          handBack(WF_ID, verdict(id), { text: JSON.stringify({ ...verdict(id), verdict: 'accept', summary: 'x' }) }),
        /its token is refused: the token's aud claim is not accepted/,
      ],
      ['no token', (id) => handBack(WF_ID, verdict(id), { token: null }), /is not a result document/],
      ['another run’s result', () => handBack(WF_ID, verdict('rother')), /its result is for run rother, not r/],
      [
        'another run',
        (id) => handBack(WF_ID, verdict(id), { claims: { run_id: '5555' } }),
        /from workflow run 5555, not 4242/,
      ],
    ];
    for (const [, plant, why] of cases) {
      h.forge.artifacts.clear();
      const id = await liveRun(h, { kind: 'lander', secret: null, ref: REF });
      completed(id);
      plant(id);
      const [r] = await reap();
      expect(r!.outcome).toBe('failure');
      expect(r!.reason).toMatch(why);
      expect((await h.store.runs.get(id))!.verdict).toBeNull();
    }
  });

  it('TR32 a writer’s own workflow run, with its own valid token, hands nothing back: only the run yoke dispatched is read', async () => {
    // Not bound yet: the reaper finds the workflow run yoke dispatched (4242) now, as it would on GitHub.
    const id = await liveRun(h, {
      kind: 'lander',
      secret: null,
      ref: formatActionsRef({ workflow: 'yoke-run.yml', ref: 'main', id: null }),
    });
    completed(id);
    // The writer dispatched yoke-run.yml with yoke's run id in its inputs: a genuine token of their run 5555, which completed first.
    handBack(5555, verdict(id), { claims: { run_id: '5555', actor: 'mallory' } });
    const downloaded: number[] = [];
    const download = h.forge.downloadArtifact.bind(h.forge);
    h.forge.downloadArtifact = async (repo, artifactId) => (downloaded.push(artifactId), download(repo, artifactId));
    const [r] = await reap();
    // Bound to yoke's own workflow run by this reap, whose artifacts hold no result; the writer's run was never read.
    expect((await h.store.runs.get(id))!.launcherRef).toBe(REF);
    expect(downloaded).toEqual([]);
    expect(r!.outcome).toBe('failure');
    expect(r!.reason).toMatch(/left no yoke-result artifact/);
    expect((await h.store.runs.get(id))!.verdict).toBeNull();
    // Copied into yoke's own run's artifact (were that possible), its token still speaks for run 5555 and mallory.
    const again = await liveRun(h, { kind: 'lander', secret: null, ref: REF });
    completed(again);
    handBack(WF_ID, verdict(again), { claims: { run_id: '5555', actor: 'mallory' } });
    const [r2] = await reap();
    expect(r2!.reason).toMatch(/its token is refused: the token is from workflow run 5555, not 4242/);
    expect((await h.store.runs.get(again))!.verdict).toBeNull();
  });

  it('TR35 a result artifact squatted before the report job (the fixed name, or a random-looking one, with no good token) does not hide the real one under the name the report job chose', async () => {
    const id = await liveRun(h, { kind: 'lander', secret: null, ref: REF });
    completed(id);
    // Uploaded first by code that ran earlier in the workflow run: a reject with no token, and one with another run's token.
    handBack(WF_ID, { ...verdict(id), verdict: 'reject' }, { token: null, name: 'yoke-result' });
    handBack(
      WF_ID,
      { ...verdict(id), verdict: 'reject' },
      { claims: { run_id: '5555' }, name: `yoke-result-${'a'.repeat(32)}` },
    );
    // Not a result artifact's name at all: never read.
    handBack(WF_ID, { ...verdict(id), verdict: 'reject' }, { name: 'yoke-result-final' });
    // The report job's own, under the name its runner chose.
    handBack(WF_ID, verdict(id), { name: `yoke-result-${'0123456789abcdef'.repeat(2)}` });
    const [r] = await reap();
    expect([r!.outcome, r!.reason]).toEqual(['success', null]);
    expect((await h.store.runs.get(id))!.verdict).toBe('accept');
  });

  it('TR35 with no result artifact whose token binds, the run ends saying why each was refused', async () => {
    const id = await liveRun(h, { kind: 'lander', secret: null, ref: REF });
    completed(id);
    handBack(WF_ID, verdict(id), { token: null, name: 'yoke-result' });
    handBack(WF_ID, verdict(id), { claims: { run_id: '5555' }, name: `yoke-result-${'b'.repeat(32)}` });
    const [r] = await reap();
    expect(r!.outcome).toBe('failure');
    expect(r!.reason).toMatch(
      /is not a result document .*; its token is refused: the token is from workflow run 5555, not 4242/,
    );
  });

  it('TR32 an expired token issued while the run was live is believed; one issued after the run completed is not', async () => {
    const live = await liveRun(h, { kind: 'lander', secret: null, ref: REF });
    completed(live);
    handBack(WF_ID, verdict(live));
    // yoke was down for an hour: the token expired long ago, but was issued while workflow run 4242 ran.
    h.clock.advance(3600_000);
    const [r] = await reap();
    expect([r!.outcome, (await h.store.runs.get(live))!.verdict]).toEqual(['success', 'accept']);

    h.forge.artifacts.clear();
    const late = await liveRun(h, { kind: 'lander', secret: null, ref: REF });
    completed(late, { updatedAt: h.clock.now() - 600_000 });
    handBack(WF_ID, verdict(late));
    const [again] = await reap();
    expect(again!.outcome).toBe('failure');
    expect(again!.reason).toMatch(/when workflow run 4242 was not live/);
  });

  it('TR32 an artifact that fails to download is read again on the next tick, never turned into a failure or a strike', async () => {
    const id = await liveRun(h, { kind: 'afk_auto', secret: null, ref: REF, issue: 3 });
    h.forge.addIssue('acme/api', 3);
    completed(id);
    h.forge.repo('acme/api').branches[`yoke/3-${id}`] = { head: 'c'.repeat(40), protected: false, base: 'c0' };
    handBack(WF_ID, {
      run_id: id,
      outcome: 'success',
      summary: 'Added the helper.',
      push: { branch: `yoke/3-${id}`, commit: 'c'.repeat(40), base: 'b'.repeat(40), title: 'Add the helper' },
    });
    h.forge.failingDownloads = 2;
    expect(await reap()).toEqual([]);
    expect(await reap()).toEqual([]);
    expect((await h.store.runs.get(id))!.status).toBe('live');
    expect((await h.store.repos.get('acme/api'))!.consecutiveFailures).toBe(0);
    const [r] = await reap();
    expect(r!.outcome).toBe('success');
    // yoke opened the claim PR itself, as the app, from the branch the deliver job pushed.
    expect(h.forge.openedPulls).toEqual([
      {
        repo: 'acme/api',
        head: `yoke/3-${id}`,
        base: 'main',
        title: 'Add the helper',
        body: `Closes #3\n\nThe agent's summary, quoted as it wrote it:\n\n\`\`\`\nAdded the helper.\n\`\`\`\n\nYoke-Run: ${id}`,
      },
    ]);
    expect((await h.store.runs.get(id))!.summary).toBe('Opened #1001. Added the helper.');
    expect(h.forge.downloads).toBe(3);
  });

  it('TR32 a push the result names that is not on its branch, or on a branch not the run’s, is a delivery failure', async () => {
    const id = await liveRun(h, { kind: 'afk_auto', secret: null, ref: REF, issue: 4 });
    completed(id);
    h.forge.repo('acme/api').branches[`yoke/4-${id}`] = { head: 'd'.repeat(40), protected: false, base: 'c0' };
    handBack(WF_ID, {
      run_id: id,
      outcome: 'success',
      push: { branch: `yoke/4-${id}`, commit: 'c'.repeat(40), base: 'b'.repeat(40) },
    });
    const [r] = await reap();
    expect(r!.outcome).toBe('failure');
    expect((await h.store.runs.get(id))!.summary).toBe(`Delivery failed: yoke/4-${id} is at ddddddd, not ccccccc`);
    expect(h.forge.openedPulls).toEqual([]);
  });

  it('TR32 a fix handed back moves the claim PR’s branch to its commit as the app, fast forward, and removes its own branch', async () => {
    const id = await liveRun(h, { kind: 'fix', secret: null, ref: REF });
    h.forge.addPull('acme/api', { number: 7, headSha: LANDER_HEAD, headRef: 'yoke/1-rorig' });
    h.forge.repo('acme/api').branches[`yoke/fix-${id}`] = { head: 'f'.repeat(40), protected: false, base: 'c0' };
    completed(id);
    handBack(WF_ID, {
      run_id: id,
      outcome: 'success',
      summary: 'Fixed the test.',
      push: { branch: `yoke/fix-${id}`, commit: 'f'.repeat(40), base: LANDER_HEAD },
    });
    const [r] = await reap();
    expect(r!.outcome).toBe('success');
    expect(h.forge.branchMoves).toEqual([{ repo: 'acme/api', branch: 'yoke/1-rorig', sha: 'f'.repeat(40) }]);
    expect(h.forge.deletedBranches).toEqual([{ repo: 'acme/api', branch: `yoke/fix-${id}` }]);
    expect((await h.store.runs.get(id))!.summary).toBe('Pushed fffffff to #7. Fixed the test.');
  });

  it('TR32 a fix handed back for a PR closed meanwhile is a delivery failure, and its own branch is removed all the same', async () => {
    const id = await liveRun(h, { kind: 'fix', secret: null, ref: REF });
    h.forge.repo('acme/api').branches[`yoke/fix-${id}`] = { head: 'f'.repeat(40), protected: false, base: 'c0' };
    completed(id);
    handBack(WF_ID, {
      run_id: id,
      outcome: 'success',
      push: { branch: `yoke/fix-${id}`, commit: 'f'.repeat(40), base: LANDER_HEAD },
    });
    const [r] = await reap();
    expect(r!.outcome).toBe('failure');
    expect((await h.store.runs.get(id))!.summary).toBe('Delivery failed: PR #7 is not open');
    expect([h.forge.branchMoves, h.forge.deletedBranches]).toEqual([
      [],
      [{ repo: 'acme/api', branch: `yoke/fix-${id}` }],
    ]);
  });

  it('TR32 a workflow run that left no result artifact ends its run as it would without a report, saying so', async () => {
    const id = await liveRun(h, { kind: 'afk_auto', secret: null, ref: REF });
    completed(id);
    const [r] = await reap();
    expect([r!.outcome, r!.reason]).toEqual([
      'failure',
      'ended without reporting a result (workflow run 4242 left no yoke-result artifact)',
    ]);
  });

  describe('BU02 a result handed back after the reaper ended its run', () => {
    /** A run reaped at its deadline while its workflow ran on: it holds its $5 reservation, spend unknown. */
    async function reapedAtDeadline(issue: number) {
      const id = await liveRun(h, { kind: 'afk_auto', secret: null, ref: REF, issue, reservedUsd: 5 });
      h.forge.addIssue('acme/api', issue);
      h.forge.workflowRuns.set(id, { ...WF });
      h.clock.advance(3600_000);
      const [r] = await reap();
      expect([r!.outcome, r!.reason]).toEqual(['timeout', 'budget deadline passed']);
      expect((await h.store.spend.holdings(0)).map((x) => [x.id, x.reservedUsd, x.live])).toEqual([[id, 5, false]]);
      // The workflow ends (its report job runs when it is cancelled) and hands back what it spent, and a push.
      completed(id, { conclusion: 'cancelled' });
      h.forge.repo('acme/api').branches[`yoke/${issue}-${id}`] = { head: 'c'.repeat(40), protected: false, base: 'c0' };
      return id;
    }
    const spent = (id: string, issue: number) => ({
      run_id: id,
      outcome: 'success',
      summary: 'Added the helper.',
      cost: { usd: 1.25, input_tokens: 52_000, output_tokens: 4_100 },
      push: { branch: `yoke/${issue}-${id}`, commit: 'c'.repeat(40), base: 'b'.repeat(40), title: 'Add the helper' },
    });

    it('BU02 is charged what it says it spent, in place of its reservation, and delivers nothing: no PR for an ended run', async () => {
      const id = await reapedAtDeadline(5);
      handBack(WF_ID, spent(id, 5));
      expect(await reap()).toEqual([]);
      const run = (await h.store.runs.get(id))!;
      expect([run.status, run.outcome, run.cost, run.reportedOutcome]).toEqual([
        'ended',
        'timeout',
        { usd: 1.25, inputTokens: 52_000, outputTokens: 4_100 },
        null,
      ]);
      expect(await h.store.spend.holdings(0)).toEqual([]);
      expect([h.forge.openedPulls, h.forge.branchMoves]).toEqual([[], []]);
      // Read once: the next ticks do not download it again.
      const downloads = h.forge.downloads;
      await reap();
      expect(h.forge.downloads).toBe(downloads);
    });

    it('BU02 one whose token is another run’s, or was issued after its workflow ended, changes nothing: the run stays for an operator to settle', async () => {
      const id = await reapedAtDeadline(6);
      handBack(WF_ID, spent(id, 6), { claims: { run_id: '5555' } });
      await reap();
      expect((await h.store.runs.get(id))!.cost).toBeNull();
      expect((await h.store.spend.holdings(0)).map((x) => x.id)).toEqual([id]);
      // Read once: what it handed back is not downloaded again on each tick.
      const once = h.forge.downloads;
      await reap();
      expect(h.forge.downloads).toBe(once);
      // Past its deadline plus the wait for a result, it is no longer looked for at all.
      spendRead.clear();
      h.clock.advance(31 * 60_000);
      const downloads = h.forge.downloads;
      await reap();
      expect(h.forge.downloads).toBe(downloads);
    });
  });
});
