import { randomBytes } from 'node:crypto';
import type { RepoConfig } from '../config/repo-config.js';
import type { CommentView, Forge, RepoRef } from '../forge/types.js';
import { CONTROL_LABEL } from '../forge/types.js';
import type { Launcher } from '../launcher/launcher.js';
import type { Clock, Log, Timers } from '../log.js';
import type { Store } from '../store/store.js';
import { executeRepoActions, planRepoActions, postVerdict } from './autoland.js';
import type { CapPolicy, LivenessSnapshot } from './cap.js';
import { subjectKey, type Candidate } from './candidate.js';
import { lockedLaunch } from './launch.js';
import { SerialLock } from './lock.js';
import { fixCandidates, landerCandidates, newWorkCandidates, type ProducerContext } from './producers.js';
import { reapRuns, type Reaped } from './reaper.js';
import { CLAIM_LABEL, type RepoFacts } from './repo-facts.js';
import { spawnPass, type PassOutcome } from './spawn-pass.js';
import { endRun } from './strikes.js';

export interface EnginePolicy extends CapPolicy {
  pauseThreshold: number;
  configRefreshMs: number;
  landerAttemptsPerHead: number;
  tickMs: number;
  reaperMs: number;
}

export interface EngineDeps {
  store: Store;
  forge: Forge;
  launcher: Launcher;
  clock: Clock;
  timers: Timers;
  log: Log;
  policy: EnginePolicy;
  apiUrl: string;
  /** Logins whose verdict markers count besides yoke's own bot login. */
  trustedMarkerLogins: readonly string[];
  newRunId?: () => string;
}

interface Gathered {
  repos: RepoRef[];
  snapshot: LivenessSnapshot;
  candidates: Candidate[];
  factsMemo: Map<string, Promise<RepoFacts | null>>;
  authFailures: PassReport['authFailures'];
}

export type PassTrigger = 'scheduler' | 'reaper' | 'kick';

export interface PassReport {
  trigger: PassTrigger;
  repos: number;
  candidates: Candidate[];
  outcomes: PassOutcome[];
  reaped: Reaped[];
  authFailures: { installationId: number; detail: string }[];
}

export function newRunId(): string {
  return `r${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
}

/** The fleet: one lock, one spawn decision point, two ticks. */
export class Engine {
  readonly lock = new SerialLock();
  private handles: unknown[] = [];
  /** Passes queued but not yet started, by trigger: a tick or kick that finds one waiting shares it. */
  private waiting = new Map<PassTrigger, Promise<PassReport>>();
  private trusted: Set<string> | null = null;
  /** Called with the newest comments of each repo a pass read (commands found by poll). */
  onPolledComments: ((repo: RepoRef, comments: readonly CommentView[]) => Promise<void>) | null = null;
  lastPass: PassReport | null = null;

  constructor(readonly deps: EngineDeps) {}

  private get now(): number {
    return this.deps.clock.now();
  }

  async trustedLogins(): Promise<Set<string>> {
    if (!this.trusted) {
      const bot = (await this.deps.forge.botLogin()).toLowerCase();
      this.trusted = new Set([bot, ...this.deps.trustedMarkerLogins.map((l) => l.toLowerCase())]);
    }
    return this.trusted;
  }

  repoRef(fullName: string): RepoRef | null {
    const state = this.deps.store.repos.get(fullName);
    const [owner, name] = fullName.split('/');
    if (!state || state.installationId === null || !owner || !name) return null;
    return { owner, name, fullName, installationId: state.installationId };
  }

  start(): void {
    const { timers, policy } = this.deps;
    this.handles.push(timers.setInterval(() => void this.schedulerTick().catch((e) => this.logPassError(e)), policy.tickMs));
    this.handles.push(timers.setInterval(() => void this.reaperTick().catch((e) => this.logPassError(e)), policy.reaperMs));
  }

  stop(): void {
    for (const h of this.handles) this.deps.timers.clearInterval(h);
    this.handles = [];
  }

  private logPassError(err: unknown): void {
    this.deps.log.error({ err: err instanceof Error ? err.stack : String(err) }, 'spawn pass failed; the next tick re-derives everything');
  }

  private queue(trigger: PassTrigger, pass: () => Promise<PassReport>): Promise<PassReport> {
    const already = this.waiting.get(trigger);
    if (already) return already;
    const queued = this.lock.run(() => {
      this.waiting.delete(trigger);
      return pass();
    });
    this.waiting.set(trigger, queued);
    return queued;
  }

  /** The scheduler's fill heartbeat. */
  schedulerTick(): Promise<PassReport> {
    return this.queue('scheduler', () => this.spawnOnce('scheduler', []));
  }

  /** Reap, then fill the freed slots in the same pass (SP11). */
  reaperTick(): Promise<PassReport> {
    return this.queue('reaper', async () => this.spawnOnce('reaper', await this.reap()));
  }

  /** An early pass (toggle-on, reset, start, a webhook). */
  kick(): Promise<PassReport> {
    return this.queue('kick', () => this.spawnOnce('kick', []));
  }

  private async reap(): Promise<Reaped[]> {
    const reaped = await reapRuns({
      store: this.deps.store,
      launcher: this.deps.launcher,
      now: () => this.now,
      pauseThreshold: this.deps.policy.pauseThreshold,
      repoRef: (n) => this.repoRef(n),
      log: this.deps.log,
    });
    for (const r of reaped) {
      this.deps.log.info({ run: r.run.id, kind: r.run.kind, repo: r.run.repo, outcome: r.outcome, reason: r.reason }, 'reaped run');
      if (r.effect === 'paused') await this.notifyPaused(r.run.repo, r.run.issueNumber);
    }
    return reaped;
  }

  async notifyPaused(fullName: string, issue: number | null): Promise<void> {
    const repo = this.repoRef(fullName);
    const state = this.deps.store.repos.get(fullName);
    if (!repo || !state || issue === null) return;
    try {
      await this.deps.forge.createComment(
        repo,
        issue,
        `yoke paused ${fullName} after ${state.consecutiveFailures} consecutive AFK failures: the auto loop is stopped and manual starts are refused until someone resets it.\n\n**To recover:** comment \`/yoke reset\` here (needs write access), or \`POST /yoke/api/repos/${fullName}/reset\`.`,
      );
    } catch (err) {
      this.deps.log.warn({ repo: fullName, err: String(err) }, 'could not post the pause notice');
    }
  }

  /** The read half of a pass: one listing, one snapshot, every producer. Launches nothing. */
  private async gather(): Promise<Gathered> {
    const { store, forge, policy, log } = this.deps;
    const trusted = await this.trustedLogins();

    // One repo listing, with one authentication per installation (SP02).
    const authFailures: PassReport['authFailures'] = [];
    const repos: RepoRef[] = [];
    for (const installationId of await forge.listInstallations()) {
      try {
        await forge.authenticate(installationId);
        repos.push(...(await forge.listRepos(installationId)));
      } catch (err) {
        const detail = err instanceof Error ? err.message : String(err);
        authFailures.push({ installationId, detail });
        log.warn({ installationId, detail }, 'installation skipped for this pass');
      }
    }
    for (const repo of repos) {
      const known = store.repos.get(repo.fullName);
      if (!known || known.installationId !== repo.installationId) store.repos.ensure(repo.fullName, repo.installationId, this.now);
    }

    // One liveness snapshot.
    const live = store.runs.listLive();
    const snapshot: LivenessSnapshot = { liveCount: live.length, liveSubjects: new Set(live.map((r) => subjectKey(r.repo, r.subject))) };
    const requests = store.requests.listOpen();

    const factsMemo = new Map<string, Promise<RepoFacts | null>>();
    const readConfig = async (repo: RepoRef): Promise<RepoConfig | null> => {
      const cfg = await forge.readConfig(repo, { maxAgeMs: policy.configRefreshMs });
      return cfg.state === 'valid' ? cfg.config : null;
    };
    const facts = (repo: RepoRef): Promise<RepoFacts | null> => {
      let memo = factsMemo.get(repo.fullName);
      if (!memo) {
        memo = this.readFacts(repo, snapshot, requests, trusted).catch((err) => {
          log.warn({ repo: repo.fullName, err: String(err) }, 'repo read failed; skipped for this pass');
          return null;
        });
        factsMemo.set(repo.fullName, memo);
      }
      return memo;
    };
    const ctx: ProducerContext = {
      repos,
      snapshot,
      policy,
      facts,
      wantsLanders: async (repo) =>
        requests.some((r) => r.repo === repo.fullName && r.kind === 'land') || (await readConfig(repo))?.autoland.enabled === true,
      wantsFixes: async (repo) => (await readConfig(repo))?.fix_forward.enabled === true,
    };

    // Producers gather from the same snapshot; none launches (SP03, SP11).
    const candidates = [...(await landerCandidates(ctx)), ...(await fixCandidates(ctx)), ...(await newWorkCandidates(ctx))];
    return { repos, snapshot, candidates, factsMemo, authFailures };
  }

  /** What a pass would launch now, in pipeline order, without launching (the fleet report, tests). */
  previewCandidates(): Promise<Candidate[]> {
    return this.lock.run(async () => (await this.gather()).candidates);
  }

  /** Reaps what ended (after a restart, say) without filling. */
  recover(): Promise<Reaped[]> {
    return this.lock.run(() => this.reap());
  }

  /** SP01: the single launch decision point. Call only under the lock. */
  async spawnOnce(trigger: PassTrigger, reaped: Reaped[]): Promise<PassReport> {
    const { store, forge, log } = this.deps;
    const { repos, snapshot, candidates, factsMemo, authFailures } = await this.gather();

    const outcomes = await spawnPass(candidates, snapshot, this.deps.policy, (c, cap) => this.launch(c, cap, factsMemo));

    // Writes after decisions: merges, claim labels, notices, verdicts not yet posted.
    for (const memo of factsMemo.values()) {
      const f = await memo;
      if (!f) continue;
      const fresh: RepoFacts = { ...f, runs: store.runs.listForRepo(f.repo.fullName) };
      const actions = planRepoActions(fresh, (pr, sha) => store.merges.get(f.repo.fullName, pr, sha) !== undefined);
      await executeRepoActions({ store, forge, now: () => this.now, log }, fresh, actions);
      if (this.onPolledComments) {
        try {
          await this.onPolledComments(f.repo, f.snapshot.recentComments);
        } catch (err) {
          log.warn({ repo: f.repo.fullName, err: String(err) }, 'polled commands failed; they are retried next pass');
        }
      }
    }
    await this.postPendingVerdicts();

    const report: PassReport = { trigger, repos: repos.length, candidates, outcomes, reaped, authFailures };
    this.lastPass = report;
    return report;
  }

  private async readFacts(
    repo: RepoRef,
    snapshot: LivenessSnapshot,
    requests: ReturnType<Store['requests']['listOpen']>,
    trusted: Set<string>,
  ): Promise<RepoFacts | null> {
    const { store, forge, policy } = this.deps;
    const snap = await forge.readRepo(repo, { claimLabel: CLAIM_LABEL, configMaxAgeMs: policy.configRefreshMs });
    const state = store.repos.get(repo.fullName);
    if (!state) return null;
    if (snap.config.state === 'absent') {
      if (state.disabledReason) store.repos.setDisabled(repo.fullName, null, this.now);
      return null;
    }
    if (snap.config.state === 'invalid') {
      await this.disableRepo(repo, snap.config.reason, snap.issues);
      return null;
    }
    if (state.disabledReason) store.repos.setDisabled(repo.fullName, null, this.now);
    const mine = requests.filter((r) => r.repo === repo.fullName);
    const startableIssues = new Set<number>();
    for (const req of mine) {
      if (req.kind !== 'start' || snap.issues.some((i) => i.number === req.number)) continue;
      const issue = await forge.getIssue(repo, req.number);
      if (issue && issue.state === 'open' && !issue.isPull) startableIssues.add(req.number);
      else store.requests.drop(req.id); // closed since it was asked for: nothing to start
    }
    return {
      repo,
      state: store.repos.get(repo.fullName)!,
      config: snap.config.config,
      snapshot: snap,
      runs: store.runs.listForRepo(repo.fullName),
      requests: mine,
      startableIssues,
      trustedLogins: trusted,
      liveSubjects: snapshot.liveSubjects,
    };
  }

  /** GH01: an invalid opt-in file disables the repo and says why, once per reason. */
  private async disableRepo(repo: RepoRef, reason: string, issues: RepoFacts['snapshot']['issues']): Promise<void> {
    const { store, forge, log } = this.deps;
    store.repos.setDisabled(repo.fullName, reason, this.now);
    const state = store.repos.get(repo.fullName);
    if (state?.disabledNotified === reason) return;
    log.warn({ repo: repo.fullName, reason }, 'repo disabled by its opt-in file');
    const control = issues.find((i) => i.labels.includes(CONTROL_LABEL));
    if (control) {
      try {
        await forge.createComment(
          repo,
          control.number,
          `yoke has disabled ${repo.fullName}: ${reason}\n\n**To recover:** fix \`.github/yoke.yml\` on the default branch; yoke re-reads it on its next pass.`,
        );
      } catch (err) {
        log.warn({ repo: repo.fullName, err: String(err) }, 'could not post the disabled notice');
        return;
      }
    }
    store.repos.markDisabledNotified(repo.fullName, reason);
  }

  private async launch(c: Candidate, cap: number, factsMemo: Map<string, Promise<RepoFacts | null>>) {
    const { store, launcher, policy, log } = this.deps;
    const facts = await factsMemo.get(c.repo);
    const repo = facts?.repo ?? this.repoRef(c.repo);
    const workflow = facts?.config.launcher.workflow ?? 'yoke-run.yml';
    const ref = facts?.config.launcher.ref ?? facts?.snapshot.defaultBranch ?? 'main';
    const result = await lockedLaunch(
      { store, launcher, now: () => this.now, newRunId: this.deps.newRunId ?? newRunId },
      c,
      cap,
      workflow,
      (rec) => ({
        runId: rec.runId,
        kind: c.kind,
        repo: repo!,
        subject: c.subject,
        issueNumber: c.issueNumber,
        prNumber: c.prNumber,
        headSha: c.headSha,
        deadline: rec.deadline,
        secret: rec.secret,
        apiUrl: this.deps.apiUrl,
        workflow,
        ref,
      }),
      (runId, detail) => {
        const run = store.runs.get(runId);
        if (!run) return;
        const ended = endRun(store, run, 'failure', `launch failed: ${detail}`, this.now, policy.pauseThreshold);
        if (ended?.effect === 'paused') void this.notifyPaused(c.repo, c.issueNumber);
      },
    );
    log.info({ repo: c.repo, kind: c.kind, subject: c.subject, cap, result: result.kind, why: c.why }, 'launch decision');
    return result;
  }

  async postPendingVerdicts(): Promise<void> {
    for (const run of this.deps.store.runs.listUnpostedVerdicts()) {
      const repo = this.repoRef(run.repo);
      if (!repo) continue;
      try {
        await postVerdict({ store: this.deps.store, forge: this.deps.forge, now: () => this.now, log: this.deps.log }, run, repo);
      } catch (err) {
        this.deps.log.warn({ run: run.id, err: String(err) }, 'could not post the verdict marker; retried next pass');
      }
    }
  }
}
