import { describe, expect, it } from 'vitest';
import { migrate, openDb } from '../../src/store/sql/db.js';
import { storeOver, type Store } from '../../src/store/store.js';
import { useEngines } from '../helpers/engines.js';
import { newRun } from '../helpers/new-run.js';

describe('the store', () => {
  it('applies its migrations once, in order, and records them', () => {
    const db = openDb(':memory:');
    const applied = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[];
    expect(applied.map((a) => a.version)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
    ]);
    expect(migrate(db)).toBe(0);
  });

  it('opens each :memory: store as a copy of one migrated image: what one store writes, the next does not hold', () => {
    const first = openDb(':memory:');
    first.prepare("INSERT INTO repos (full_name, first_seen_at, updated_at) VALUES ('acme/api', 1, 1)").run();
    const second = openDb(':memory:');
    expect(first.prepare('SELECT count(*) AS n FROM repos').get()).toEqual({ n: 1 });
    expect(second.prepare('SELECT count(*) AS n FROM repos').get()).toEqual({ n: 0 });
    expect(second.prepare('SELECT count(*) AS n FROM schema_migrations').get()).toEqual(
      first.prepare('SELECT count(*) AS n FROM schema_migrations').get(),
    );
    expect(migrate(second)).toBe(0);
  });
});

for (const engine of useEngines()) {
  describe.skipIf(engine.skip)(`the store on ${engine.name}`, () => {
    const open = async (): Promise<Store> => storeOver(await engine.fresh());

    it("QA01 records a holder's wakes in one statement and answers with the new ones only: a wait already recorded, or repeated, wakes nobody again", async () => {
      const store = await open();
      const wake = (subject: string, waitKey: string, recipient = 'ada') => ({
        runId: 'dr-1',
        stage: 'qa',
        recipient,
        subject,
        waitKey,
        reason: 'qa_case_missing',
        wokenAt: 1,
      });
      const first = [wake('APP-1', 'k1'), wake('APP-2', 'k2')];
      expect(await store.qa.recordWakes(first)).toEqual(first);
      const again = [wake('APP-1', 'k1'), wake('APP-1', 'k9'), wake('APP-1', 'k9'), wake('APP-2', 'k2', 'bo')];
      expect(await store.qa.recordWakes(again)).toEqual([wake('APP-1', 'k9')]);
      expect((await store.qa.wakes('dr-1')).map((w) => `${w.subject}/${w.waitKey}/${w.recipient}`).sort()).toEqual([
        'APP-1/k1/ada',
        'APP-1/k9/ada',
        'APP-2/k2/ada',
      ]);
      expect(await store.qa.recordWakes([])).toEqual([]);
    });

    it('SP08 refuses a second live run for one subject at the database level, and allows it once the first has ended', async () => {
      const store = await open();
      await store.runs.insert(newRun('a', 'issue#1'));
      await expect(store.runs.insert(newRun('b', 'issue#1'))).rejects.toThrow(
        /UNIQUE constraint failed|duplicate key value violates unique constraint/,
      );
      expect(await store.runs.end('a', 'failure', null, 3)).toBe(true);
      expect(await store.runs.end('a', 'failure', null, 4)).toBe(false); // an outcome is applied once
      await store.runs.insert(newRun('b', 'issue#1'));
      expect((await store.runs.listLive()).map((r) => r.id)).toEqual(['b']);
    });

    it('SP15 pauses at the threshold and keeps the pause through a success; only unpause lifts it', async () => {
      const store = await open();
      await store.repos.ensure('acme/api', 1, 0);
      for (let i = 1; i <= 3; i++) await store.repos.addFailure('acme/api', 3, 100 * i);
      expect(await store.repos.get('acme/api')).toMatchObject({ consecutiveFailures: 3, pausedSince: 300 });
      await store.repos.resetFailures('acme/api', 400);
      expect(await store.repos.get('acme/api')).toMatchObject({ consecutiveFailures: 0, pausedSince: 300 });
      await store.repos.unpause('acme/api', 500);
      expect(await store.repos.get('acme/api')).toMatchObject({ consecutiveFailures: 0, pausedSince: null });
    });

    it("SC10 keeps a repository's read only when it found something new, judged by its digest, never by the time it was read", async () => {
      const store = await open();
      await store.repos.ensure('acme/api', 1, 0);
      await store.repos.ensure('acme/web', 1, 0);
      // One settings object throughout, as a repository's unchanged opt-in file is: only the claims differ.
      const claimed = { auto: true };
      const read = (readAt: number, title: string) => ({
        readAt,
        settings: claimed,
        openClaims: [{ number: 7, title, headSha: 'a'.repeat(40), author: 'yoke[bot]' }],
      });
      expect(await store.repos.readDigests()).toEqual(new Map());
      await store.repos.recordRead('acme/api', read(100, 'Fix the parser'));
      const first = await store.repos.readDigests();
      expect([...first.keys()]).toEqual(['acme/api']);
      // The same findings, read later: nothing is written, so the kept read is still the first one.
      await store.repos.recordRead('acme/api', read(200, 'Fix the parser'), first.get('acme/api'));
      expect((await store.repos.lastRead('acme/api'))?.readAt).toBe(100);
      // A title edited on the claim PR is something new: kept, with a new digest.
      await store.repos.recordRead('acme/api', read(300, 'Fix the parser, again'), first.get('acme/api'));
      expect((await store.repos.lastRead('acme/api'))?.openClaims[0]?.title).toBe('Fix the parser, again');
      expect((await store.repos.readDigests(['acme/api', 'acme/web'])).get('acme/api')).not.toBe(first.get('acme/api'));
      // A read kept before yoke kept digests (none recorded) is written once more, then judged by its digest.
      await store.repos.recordRead('acme/web', read(400, 'x'), null);
      expect((await store.repos.lastRead('acme/web'))?.readAt).toBe(400);
      // An idle repository's read (no open claim) is judged by its settings: the same again writes nothing, new ones do.
      const settings = { auto: true, budget: { daily_usd: 5 } };
      await store.repos.recordRead('acme/web', { readAt: 500, settings, openClaims: [] });
      const idle = (await store.repos.readDigests()).get('acme/web');
      await store.repos.recordRead('acme/web', { readAt: 600, settings, openClaims: [] }, idle);
      expect((await store.repos.lastRead('acme/web'))?.readAt).toBe(500);
      await store.repos.recordRead(
        'acme/web',
        { readAt: 700, settings: { ...settings, auto: false }, openClaims: [] },
        idle,
      );
      expect((await store.repos.lastRead('acme/web'))?.settings).toEqual({ auto: false, budget: { daily_usd: 5 } });
      // Its state is read without the read.
      expect(await store.repos.get('acme/web')).toEqual({
        fullName: 'acme/web',
        installationId: 1,
        autoLoop: null,
        consecutiveFailures: 0,
        pausedSince: null,
        disabledReason: null,
        disabledNotified: null,
        firstSeenAt: 0,
        updatedAt: 0,
      });
    });

    it('TR03 a report that races the reaper does not land on a run that has ended', async () => {
      const store = await open();
      await store.runs.insert(newRun('late', 'issue#9'));
      await store.runs.end('late', 'failure', 'ended without reporting a result', 1);
      expect(await store.runs.recordReport('late', { outcome: 'success', verdict: null, summary: 'too late' }, 0)).toBe(
        false,
      );
      expect(await store.runs.get('late')).toMatchObject({ outcome: 'failure', reportedOutcome: null });
    });

    it('SP06 records a launch only with room under the cap, the subject free and (AFK work) the repository not paused, counting inside the statement', async () => {
      const store = await open();
      const counted = (id: string, subject: string) => {
        const { liveAtLaunch: _live, ...r } = newRun(id, subject);
        return r;
      };
      expect(await store.runs.insertIfRoom(counted('a', 'issue#1'), 2, true)).toBe(1);
      expect(await store.runs.insertIfRoom(counted('b', 'issue#1'), 2, true)).toBe(null); // its subject is live
      expect(await store.runs.insertIfRoom(counted('c', 'issue#2'), 2, true)).toBe(2);
      expect(await store.runs.insertIfRoom(counted('d', 'issue#3'), 2, true)).toBe(null); // at the cap
      expect((await store.runs.listLive()).map((r) => [r.id, r.liveAtLaunch, r.capAtLaunch])).toEqual([
        ['a', 1, 2],
        ['c', 2, 2],
      ]);
      await store.runs.end('a', 'success', null, 3);
      await store.repos.ensure('acme/api', 1, 0);
      for (let i = 0; i < 3; i++) await store.repos.addFailure('acme/api', 3, 10);
      expect(await store.runs.insertIfRoom(counted('e', 'issue#3'), 2, true)).toBe(null); // paused: no AFK work
      expect(await store.runs.insertIfRoom({ ...counted('f', 'pr#7'), kind: 'lander' }, 2, false)).toBe(2); // a lander still runs
    });

    it('SP06 the locked launch records the run and consumes the request it serves in one write, or neither', async () => {
      const store = await open();
      const { liveAtLaunch: _live, ...run } = newRun('l1', 'issue#1');
      const asked = await store.requests.add('acme/api', 'start', 1, 'maint', 0);
      expect(await store.runs.recordLaunch(run, 1, true, asked)).toBe(1);
      expect(await store.requests.listOpen()).toEqual([]);
      const again = await store.requests.add('acme/api', 'start', 2, 'maint', 0);
      expect(await store.runs.recordLaunch({ ...run, id: 'l2', subject: 'issue#2' }, 1, true, again)).toBe(null); // at the cap
      expect((await store.requests.listOpen()).map((r) => r.id)).toEqual([again]);
      expect((await store.runs.listLive()).map((r) => r.id)).toEqual(['l1']);
    });

    it('sums spend per repository and UTC day, with 64-bit sums and names kept in their case', async () => {
      const store = await open();
      const day = Date.UTC(2026, 11, 1, 23, 59);
      for (const [id, at, usd] of [
        ['s1', day, 1.5],
        ['s2', day + 60_000, 2],
        ['s3', day + 120_000, 0.25],
      ] as const) {
        await store.runs.insert({ ...newRun(id, `issue#${id}`), issueNumber: 5 });
        expect(
          await store.runs.recordReport(
            id,
            {
              outcome: 'success',
              verdict: null,
              summary: null,
              cost: { usd, inputTokens: 3_000_000_000, outputTokens: 7 },
            },
            at,
          ),
        ).toBe(true);
      }
      expect(await store.spend.daily(0, day + 3_600_000)).toEqual([
        { repo: 'acme/api', day: '2026-12-02', usd: 2.25, inputTokens: 6_000_000_000, outputTokens: 14, runs: 2 },
        { repo: 'acme/api', day: '2026-12-01', usd: 1.5, inputTokens: 3_000_000_000, outputTokens: 7, runs: 1 },
      ]);
      expect(await store.spend.ofWork('acme/api', 5, null)).toEqual({
        usd: 3.75,
        inputTokens: 9_000_000_000,
        outputTokens: 21,
        runs: 3,
      });
    });

    it('gives new notices and verdicts their ids, and a work lock to one holder until it is stale', async () => {
      const store = await open();
      const notice = {
        runId: 'dr-1',
        stage: 'qa',
        subject: 'APP-1',
        audience: 'holder' as const,
        recipientKind: 'holder' as const,
        recipient: 'alice',
        waitKey: 'k',
        thread: 3,
        at: 1,
      };
      const [n1, n2] = [await store.notices.create(notice), await store.notices.create(notice)];
      expect(n2).toBe(n1 + 1);
      await store.notices.update(n1, { state: 'posted', commentId: 99, detail: null, at: 2 });
      expect(await store.notices.get(n1)).toMatchObject({ state: 'posted', commentId: 99, detail: null, updatedAt: 2 });
      const verdict = {
        runId: 'dr-1',
        stage: 'qa',
        issueNumber: 1,
        groupId: null,
        planId: 'p',
        caseId: 'c',
        commit: 'abc',
        result: 'pass' as const,
        evidence: null,
        source: 'api',
        replaces: null,
        recordedBy: 'alice',
        recordedAt: 1,
      };
      const v1 = await store.qa.recordVerdict(verdict);
      expect(await store.qa.recordVerdict(verdict)).toBe(v1 + 1);
      expect(await store.workLocks.take('freeze:x', 'p-a', 1_000, 500)).toBe(null);
      expect(await store.workLocks.take('freeze:x', 'p-b', 1_200, 500)).toEqual({ holder: 'p-a', since: 1_000 });
      expect(await store.workLocks.take('freeze:x', 'p-b', 1_500, 500)).toBe(null); // stale: taken over
      expect(await store.workLocks.held('freeze:x', 1_600, 500)).toEqual({ holder: 'p-b', since: 1_500 });
    });

    it("TR12 a plan execution's lease only moves later, and a repeated start with its key returns the same execution", async () => {
      const store = await open();
      const start = {
        id: 'ex-1',
        runId: 'dr-1',
        stage: 'qa',
        subject: 'APP-1',
        kind: 'qa-stage' as const,
        at: 1,
        leaseUntil: 100,
        requestKey: 'key-1',
      };
      expect(await store.executions.start(start)).toMatchObject({ id: 'ex-1', leaseUntil: 100 });
      expect(await store.executions.start({ ...start, id: 'ex-2', leaseUntil: 300 })).toMatchObject({
        id: 'ex-1',
        leaseUntil: 300,
      });
      expect(await store.executions.renew('ex-1', 200)).toBe(true);
      expect((await store.executions.get('ex-1'))!.leaseUntil).toBe(300);
      expect((await store.executions.live('dr-1', 'qa', 299)).map((e) => e.id)).toEqual(['ex-1']);
      expect(await store.executions.live('dr-1', 'qa', 300)).toEqual([]);
    });
  });
}
