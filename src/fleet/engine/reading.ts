import { listingKey, viewKey } from '../../store/shared-reads.js';
import { forEachLimited } from '../../kernel/limit.js';
import { errorStack } from '../../kernel/error-text.js';
import { viewMaxAgeMs, type RepoActivity } from '../activity.js';
import { CLAIM_LABEL } from '../repo-facts.js';
import { READ_ESTIMATE_POINTS, type PassDeps } from '../spawn/pass-deps.js';
import { keepReaders } from './readers.js';
import { inReadOrder } from '../read-order.js';
import type { RepoRef } from '../../forge/types.js';
import { listingBody, viewBody } from './shared-views.js';

// SC09, the reader's side: each tick, a yoke process keeps its installation leases (SC08), and while other processes
// read with it, reads the repositories of the installations it holds, within their budgets, as a pass would (the
// same views, probes and poll tiers), and shares what it found in the store for the pass, whichever process runs it.
// Commands it finds by poll it handles itself, as a webhook's process would. A process reading alone shares nothing:
// its passes read every installation themselves, as one yoke always did.

/** What the reading works with: a pass's own parts, and whose reading it is. */
type Reader = Pick<PassDeps, 'store' | 'forge' | 'clock' | 'log' | 'policy' | 'onPolledComments' | 'stopping'> & {
  processId: string;
  activity: RepoActivity;
};

/** What one reading tick did. */
export interface ReadingTick {
  /** The installations this process holds (reads) now. */
  held: number[];
  /** Repositories it read, and how many of them it shared anew (their view changed, or was wanted). */
  read: number;
  shared: number;
  /** Of those, the ones a webhook on another process wanted read again. */
  wanted: number;
  /** Repositories left for the next tick: the installation's budget had no room. */
  deferred: number;
}

/** The installations a reading tick holds, kept as it goes (`SharedReading.leaseKeeper`). */
interface LeaseKeeper {
  lost(installationId: number): boolean;
  renew(): Promise<void>;
}

export class SharedReading {
  /** The digest of what this process last shared under each key (loaded from the store once per installation). */
  private readonly written = new Map<string, string>();
  private readonly loaded = new Set<number>();

  constructor(
    private readonly deps: Reader,
    /** How long an installation's lease lasts without renewal: a few ticks. */
    private readonly leaseMs: number,
  ) {}

  /** Marks this process as one that reads (SC08: a process that never does is given nothing to read). */
  async start(): Promise<void> {
    await this.deps.store.processes.markReader(this.deps.processId);
  }

  async tick(): Promise<ReadingTick> {
    const { store, forge, processId } = this.deps;
    // A process whose own lease lapsed is dead to the others, who take its installations: it reads none of them.
    if (!(await store.processes.readers()).some((p) => p.id === processId)) {
      for (const id of await store.installationLeases.heldBy(processId))
        await store.installationLeases.release(id, processId);
      return { held: [], read: 0, shared: 0, wanted: 0, deferred: 0 };
    }
    const held = await keepReaders(store, processId, await forge.listInstallations(), this.leaseMs);
    const done: ReadingTick = { held, read: 0, shared: 0, wanted: 0, deferred: 0 };
    const readers = await store.processes.readers();
    if (readers.every((p) => p.id === processId)) return done;
    const known = new Map((await store.repos.list()).map((r) => [r.fullName, r.installationId]));
    const lease = this.leaseKeeper(held);
    // SC01: each installation on its own budget and bound, all at once, as a pass reads them.
    await Promise.all(
      held.map((installationId) =>
        this.readInstallation(installationId, done, known, lease).catch((err: unknown) => {
          if (!this.deps.stopping?.aborted)
            this.deps.log.warn(
              { installationId, err: errorStack(err) },
              'could not read an installation this process reads; read again next tick',
            );
        }),
      ),
    );
    return done;
  }

  private async share(key: string, installationId: number, found: { body: string; digest: string }, wanted = false) {
    if (!wanted && this.written.get(key) === found.digest) return false;
    const kept = await this.deps.store.sharedReads.put({
      key,
      installationId,
      ...found,
      readBy: this.deps.processId,
      readAt: this.deps.clock.now(),
    });
    // Not kept: the installation's lease went to another process mid-read, whose reads stand.
    if (kept) this.written.set(key, found.digest);
    return kept;
  }

  /**
   * SC08: a tick longer than the lease (the cold read of a large installation) renews every installation it holds
   * as its reads end, a third of a lease apart, so no other process takes one for unread and reads it again while
   * this tick still runs; one taken over meanwhile is left to its new reader.
   */
  private leaseKeeper(held: readonly number[]): LeaseKeeper {
    const { store, clock, processId } = this.deps;
    let renewedAt = clock.now();
    const lost = new Set<number>();
    return {
      lost: (id) => lost.has(id),
      renew: async () => {
        if (clock.now() - renewedAt < this.leaseMs / 3) return;
        renewedAt = clock.now();
        for (const id of held)
          if (!lost.has(id) && !(await store.installationLeases.claim(id, processId, this.leaseMs))) lost.add(id);
      },
    };
  }

  private async readInstallation(
    installationId: number,
    done: ReadingTick,
    known: ReadonlyMap<string, number | null>,
    lease: LeaseKeeper,
  ): Promise<void> {
    const { store, forge, policy, clock, activity } = this.deps;
    await forge.authenticate(installationId);
    // A webhook that reached another process: this view is read again now, its opt-in file too; the listing too.
    const wanted = new Set(await store.sharedReads.wanted([installationId]));
    if (wanted.has(listingKey(installationId))) forge.relist(installationId);
    const repos = await forge.listRepos(installationId, { maxAgeMs: policy.idleProbeMs });
    if (!this.loaded.has(installationId)) {
      for (const [key, digest] of await store.sharedReads.digests([installationId])) this.written.set(key, digest);
      this.loaded.add(installationId);
    }
    await this.share(
      listingKey(installationId),
      installationId,
      listingBody(repos),
      wanted.has(listingKey(installationId)),
    );
    // A repository yoke has not seen is recorded as first seen now, as the pass would: the commands this process
    // finds in it count from there (TR05), even before a pass has listed it.
    for (const r of repos)
      if (known.get(r.fullName) !== installationId) await store.repos.ensure(r.fullName, installationId, clock.now());
    const live = await store.runs.listLive();
    const requests = await store.requests.listOpen();
    let reading = 0;
    const withRuns = new Set(live.map((r) => r.repo));
    const busy = (r: RepoRef) => withRuns.has(r.fullName) || activity.hasOpenClaims(r.fullName);
    const inOrder = inReadOrder(repos, busy, (r) => forge.everRead(r));
    await forEachLimited(inOrder, policy.readConcurrency, async (repo) => {
      if (this.deps.stopping?.aborted || lease.lost(installationId)) return;
      const key = viewKey(repo.fullName);
      if (wanted.has(key)) forge.invalidate(repo.fullName);
      const maxViewAgeMs = viewMaxAgeMs(
        {
          liveRuns: live.filter((r) => r.repo === repo.fullName).length,
          openRequests: requests.filter((r) => r.repo === repo.fullName).length,
          openClaims: activity.hasOpenClaims(repo.fullName),
          wokenAt: activity.wokenAt(repo.fullName),
        },
        clock.now(),
        policy,
      );
      const opts = { claimLabel: CLAIM_LABEL, configMaxAgeMs: policy.configRefreshMs, maxViewAgeMs };
      // SC03: a read that costs requests goes ahead only while the installation's budget has room for it.
      const points = forge.budgetLeft(installationId).points - reading * READ_ESTIMATE_POINTS;
      if (points < READ_ESTIMATE_POINTS && !forge.standsIn(repo, opts)) {
        done.deferred++;
        return;
      }
      reading++;
      try {
        const view = await forge.readRepo(repo, opts);
        done.read++;
        activity.setOpenClaims(repo.fullName, view.claims.length > 0);
        if (view.recentComments.length && this.deps.onPolledComments)
          await this.deps.onPolledComments(repo, view.recentComments).catch((err: unknown) => {
            this.deps.log.warn(
              { repo: repo.fullName, err: errorStack(err) },
              'polled commands failed; retried next tick',
            );
          });
        if (await this.share(key, installationId, viewBody(view), wanted.has(key))) {
          done.shared++;
          if (wanted.has(key)) done.wanted++;
        }
      } catch (err) {
        if (!this.deps.stopping?.aborted)
          this.deps.log.warn({ repo: repo.fullName, err: errorStack(err) }, 'repo read failed; read again next tick');
      } finally {
        reading--;
        await lease.renew();
      }
    });
  }
}
