import { randomBytes } from 'node:crypto';
import { newProcessId } from '../../process-lease.js';
import { LeadershipLost, type Fence } from '../../kernel/fence.js';
import { fencedForge } from '../../forge/fenced.js';
import type { Forge, RepoRef } from '../../forge/types.js';
import { fencedLauncher } from '../../launcher/fenced.js';
import type { Run } from '../../store/fleet/runs.js';
import { postPendingVerdicts } from '../landing/verdict-comments.js';
import { CheckRefusals, syncLanderChecks } from '../landing/check-runs.js';
import type { Candidate } from '../candidate.js';
import type { FleetContext } from '../context.js';
import { postPauseNotice } from './housekeeping.js';
import { SerialLock } from './lock.js';
import { spawnOnce, stoppedPass, type PassReport, type PassTrigger } from './pass.js';
import { PassStopped } from '../spawn/pass-deps.js';
import { gatherPass, type PassDeps } from '../spawn/gather.js';
import type { NextPass } from '../spawn/next-pass.js';
import { dryPass } from './dry-pass.js';
import type { Result } from '../../kernel/result.js';
import { RepoActivity } from '../activity.js';
import { reapRuns, type Reaped } from '../runs/reaper.js';
import { repoRefOf } from '../repo-state.js';
import { collectHandedResult, type HandedResults } from '../runs/run-results.js';
import { passFailed } from '../notices/messages.js';
import { inSpan, NO_TRACER } from '../../kernel/trace.js';
import type { EngineDeps } from './engine-deps.js';
import { PassMemo } from '../spawn/pass-memo.js';
import { issueSpan, runSpanAttributes } from '../notices/issue-trace.js';
import { SharedViews } from './shared-views.js';
import { SharedReading } from './reading.js';
import { listingKey, viewKey } from '../../store/shared-reads.js';

// The fleet's clockwork: two ticks and HTTP kicks, queued on one lock so passes never interleave (SP08).

export type { EngineDeps } from './engine-deps.js';

export const newRunId = (): string => `r${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;

export class Engine {
  readonly lock = new SerialLock();
  private handles: unknown[] = [];
  /** Passes queued but not yet started, by trigger: a tick or kick that finds one waiting shares it. */
  private waiting = new Map<PassTrigger, Promise<PassReport>>();
  private trusted: Promise<ReadonlySet<string>> | null = null;
  /** Advanced every pass, so the repository that goes first within a stage rotates (SC04). */
  private passes = 0;
  private readonly activity = new RepoActivity();
  /** SC10: what this process's passes found of each repository, taken again where nothing changed. */
  private readonly memo = new PassMemo();
  private readonly checkRefusals: CheckRefusals;
  /** SC09: what other processes read and shared, as this process's passes see it. */
  private readonly shared: SharedViews;
  lastPass: PassReport | null = null;
  readonly processId: string;
  /** Aborted by stop(): the pass in flight goes no further, and queued passes are dropped (SP10 re-derives them). */
  readonly stopping = new AbortController();

  constructor(private readonly deps: EngineDeps) {
    this.checkRefusals = new CheckRefusals(deps.policy.checkRetryMs);
    this.processId = deps.processId ?? newProcessId();
    this.shared = new SharedViews(deps.store, this.processId);
    this.forge = this.shared.sharing(deps.forge);
  }

  /** The forge of this process's edges and sweeps: opt-in files another process reads come from what it shared. */
  private readonly forge: Forge;

  /** SC08/SC09: this process's share of the reading, kept on its own tick (ticks.ts). */
  reading(leaseMs: number): SharedReading {
    const { processId, activity } = this;
    return new SharedReading({ ...this.deps, processId, activity, stopping: this.stopping.signal }, leaseMs);
  }

  /** SC09: what a webhook changed is read again first, by whichever process reads it; a pass asked for once this resolves sees it. */
  private readAgain(key: string): Promise<void> {
    return this.deps.store.sharedReads.want(key).catch((err) => this.failed('could not ask for a read', err));
  }

  /** What the people-facing edges may use of this fleet. */
  context(): FleetContext {
    const { store, clock, policy, log } = this.deps;
    const forge = this.forge;
    const kick = () => void this.kick().catch((err) => this.failed('kicked pass failed', err));
    return {
      processId: this.processId,
      store,
      forge,
      clock,
      policy,
      log,
      tracer: this.deps.tracer ?? NO_TRACER,
      webUrl: this.deps.webUrl,
      kick,
      wake: (repo) => {
        this.activity.wake(repo, clock.now());
        void this.readAgain(viewKey(repo)).then(kick);
      },
      relist: (installationId) => {
        forge.relist(installationId);
        return this.readAgain(listingKey(installationId));
      },
      postVerdicts: () =>
        void this.serial(async () => {
          await postPendingVerdicts({ store, forge, clock, log });
          const checkPolicy = { landerAttemptsPerHead: policy.landerAttemptsPerHead, webUrl: this.deps.webUrl };
          await syncLanderChecks({
            store,
            forge,
            clock,
            log,
            policy: checkPolicy,
            refusals: this.checkRefusals,
          });
        }),
    };
  }

  /** A pass's dependencies; a leader's tick works through its fence (TR31), and reads what others read through the store (SC09). */
  private async passDeps(fence?: Fence, advance = true): Promise<PassDeps> {
    const d = this.deps;
    return {
      store: d.store,
      forge: await this.shared.forPass(fence ? fencedForge(d.forge, fence) : d.forge),
      launcher: fence ? fencedLauncher(d.launcher, fence) : d.launcher,
      clock: d.clock,
      log: d.log,
      policy: d.policy,
      apiUrl: d.apiUrl,
      webUrl: d.webUrl,
      checkRefusals: this.checkRefusals,
      newRunId: d.newRunId ?? newRunId,
      trustedLogins: () => this.trustedLogins(),
      rotation: advance ? this.passes++ : this.passes,
      activity: this.activity,
      onPolledComments: d.onPolledComments,
      onMerged: d.onMerged,
      tracer: d.tracer ?? NO_TRACER,
      stopping: this.stopping.signal,
      memo: this.memo,
    };
  }

  private trustedLogins(): Promise<ReadonlySet<string>> {
    this.trusted ??= this.deps.forge.botLogin().then(
      (bot) => new Set([bot.toLowerCase(), ...this.deps.trustedMarkerLogins.map((l) => l.toLowerCase())]),
      (err) => {
        this.trusted = null; // asked again next pass
        throw err;
      },
    );
    return this.trusted;
  }

  start(): void {
    const { timers, policy } = this.deps;
    this.handles.push(timers.setInterval(() => void this.led((fence) => this.schedulerTick(fence)), policy.tickMs));
    this.handles.push(timers.setInterval(() => void this.led((fence) => this.reaperTick(fence)), policy.reaperMs));
  }

  /**
   * A tick runs on the leader only, behind the fence of its epoch; a follower's tick is a renewal attempt and
   * nothing else. A tick fenced out mid-way has already said so (the fence logs); the new leader re-derives it.
   */
  private async led(tick: (fence?: Fence) => Promise<PassReport>): Promise<void> {
    try {
      const fence = this.deps.lead ? await this.deps.lead() : undefined;
      if (fence === null) return;
      await tick(fence);
    } catch (e) {
      if (!(e instanceof LeadershipLost)) this.failed('spawn pass failed; the next tick re-derives everything', e);
    }
  }

  /** No more ticks; the pass in flight stops at its next step (the write in flight finishes) and queued ones are dropped. */
  stop(): void {
    for (const h of this.handles) this.deps.timers.clearInterval(h);
    this.handles = [];
    this.stopping.abort();
  }

  /** A pass that failed, said in the log (passFailed: GitHub out of reach is said as that). */
  failed(what: string, err: unknown): void {
    passFailed(this.deps, what, err);
  }

  private queue(trigger: PassTrigger, pass: () => Promise<PassReport>): Promise<PassReport> {
    const already = this.waiting.get(trigger);
    if (already) return already;
    const queued = this.serial(async () => {
      this.waiting.delete(trigger);
      if (this.stopping.signal.aborted) return stoppedPass(trigger);
      this.deps.onPassStart?.();
      const started = performance.now();
      // Each pass is a trace of its own; the launches it makes link to it from their issues' traces.
      const report = await inSpan(
        this.deps.tracer ?? NO_TRACER,
        'yoke.pass',
        { parent: null, attributes: { 'yoke.pass.trigger': trigger } },
        async (span) => {
          const r = await pass().catch((err: unknown) => {
            if (err instanceof PassStopped) return stoppedPass(trigger);
            throw err;
          });
          span.setAttributes({
            'yoke.pass.candidates': r.candidates.length,
            'yoke.pass.launched': r.outcomes.filter((o) => o.result.kind === 'launched').length,
          });
          return r;
        },
      );
      if (report.stopped) return report;
      this.lastPass = report;
      this.deps.onPass?.(report, (performance.now() - started) / 1000);
      return report;
    });
    this.waiting.set(trigger, queued);
    return queued;
  }

  /**
   * SP08: one pass at a time, in this process (the queue) and across every process on the database (the store's
   * pass lock, held for the whole pass). A kick on a follower runs under the same lock as the leader's ticks.
   */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.run(async () => {
      const release = await this.deps.store.holdPassLock();
      try {
        return await fn();
      } finally {
        await release();
      }
    });
  }

  /** The scheduler's fill heartbeat; a leader's goes through its fence. */
  schedulerTick(fence?: Fence): Promise<PassReport> {
    return this.queue('scheduler', async () => spawnOnce(await this.passDeps(fence), 'scheduler', []));
  }

  /** Reap, then fill the freed slots in the same pass (SP11); a leader's goes through its fence. */
  reaperTick(fence?: Fence): Promise<PassReport> {
    return this.queue('reaper', async () => {
      const deps = await this.passDeps(fence);
      return spawnOnce(deps, 'reaper', await this.reap(deps));
    });
  }

  /** An early pass (toggle-on, reset, start, a webhook). */
  kick(): Promise<PassReport> {
    return this.queue('kick', async () => spawnOnce(await this.passDeps(), 'kick', []));
  }

  /** `yoke plan`: what the next pass would do for one repository, and why not for the rest; launches and writes nothing. */
  nextPass(repo: string): Promise<Result<NextPass>> {
    return this.serial(async () => {
      // The rotation the next pass will use, left where it is.
      const deps = await this.passDeps(undefined, false);
      return dryPass(deps, repo);
    });
  }

  /** What a pass would launch now, in pipeline order, without launching or writing anything. */
  previewCandidates(): Promise<Candidate[]> {
    return this.serial(async () => (await gatherPass(await this.passDeps())).candidates);
  }

  /** Reaps what ended (after a restart, say) without filling. */
  recover(): Promise<Reaped[]> {
    return this.serial(() => this.reap());
  }

  /** BU02: the ended runs whose finished workflow this process read for their spend already. */
  private readonly spendRead = new Set<string>();
  /** Reads a finished run's handed-back result through the forge the reap works with (a leader's is fenced). */
  private collector(forge: Forge, handed: HandedResults) {
    const fleet = this.context();
    return (run: Run, repo: RepoRef, workflowRunId: number) =>
      collectHandedResult({ ...fleet, forge, ...handed }, run, repo, workflowRunId);
  }

  private async reap(deps: Pick<PassDeps, 'forge' | 'launcher'> = this.deps): Promise<Reaped[]> {
    const { store, clock, policy, log } = this.deps;
    const { launcher, forge } = deps;
    const reaped = await reapRuns(
      { store, launcher, clock, log },
      {
        pauseThreshold: policy.pauseThreshold,
        repoRef: (name) => repoRefOf(store, name),
        ...(this.deps.handedResults
          ? { collect: this.collector(forge, this.deps.handedResults), spendRead: this.spendRead }
          : {}),
      },
    );
    for (const r of reaped) {
      // A run that just ended may have left work behind (its claim PR): its repository is probed next.
      this.activity.wake(r.run.repo, clock.now());
      log.info(
        { run: r.run.id, kind: r.run.kind, repo: r.run.repo, outcome: r.outcome, reason: r.reason },
        'reaped run',
      );
      if (r.effect === 'paused') {
        await postPauseNotice(
          { store, forge, log, clock, pauseThreshold: policy.pauseThreshold },
          r.run.repo,
          r.run.issueNumber,
        );
      }
      // The run, from its launch to its end, in its issue's trace.
      const ended = (await store.runs.get(r.run.id)) ?? r.run;
      await issueSpan(this.context(), { repo: ended.repo, issue: ended.issueNumber }, `yoke.run ${ended.kind}`, {
        start: ended.launchedAt,
        end: ended.endedAt ?? clock.now(),
        attributes: runSpanAttributes(ended),
        ...(r.outcome === 'success' ? {} : { error: r.reason ?? r.outcome }),
      });
    }
    return reaped;
  }
}
