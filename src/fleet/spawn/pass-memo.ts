import type { RepoView } from '../../forge/types.js';
import type { AfkLabel } from '../../store/fleet/afk-labels.js';
import type { Ask } from '../../store/fleet/asks.js';
import type { ClaimRecord } from '../../store/fleet/claims.js';
import type { RepoState } from '../../store/fleet/repos.js';
import type { Run } from '../../store/fleet/runs.js';
import type { Housekeeping } from '../engine/housekeeping.js';
import type { RepoFacts } from '../repo-facts.js';

// SC10: a pass costs what changed. What the last passes found of each repository is kept in memory, each with the
// version the store gave the repository before its rows were read (migration 30 moves it on every write, from any
// process). A repository whose version stands costs the next pass no store read; one whose view also stands (the
// forge answered with the very view it kept: nothing was probed or read anew) is not derived again either. Nothing
// lives only here: a new process, or a new leader, starts with nothing kept and reads everything from the store.

/** SC01: what the store holds of every listed repository, by name: read once per pass, a query per kind. */
export interface StoredFacts {
  states: Lookup<RepoState>;
  runs: Lookup<Run[]>;
  claims: Lookup<ClaimRecord[]>;
  afkLabels: Lookup<AfkLabel[]>;
  asks: Lookup<Ask[]>;
}

type Lookup<T> = Pick<ReadonlyMap<string, T>, 'get'>;

/** What the store held of one repository, as the last pass that read it found it. */
interface KeptRows {
  version: number | undefined;
  state: RepoState | undefined;
  runs: Run[];
  claims: ClaimRecord[];
  afkLabels: AfkLabel[];
  asks: Ask[];
}

/** What changes from pass to pass whatever a repository's own facts: set afresh on facts kept from an earlier pass. */
export type PassWide = Pick<
  RepoFacts,
  'repo' | 'liveSubjects' | 'spentToday' | 'trustedLogins' | 'requests' | 'fleetDailyUsd' | 'pauseThreshold'
>;

/** The same view: the forge kept it and answered with it (a read or a probe that found a change makes a new one). */
const sameView = (a: RepoView, b: RepoView): boolean =>
  a.config === b.config &&
  a.issues === b.issues &&
  a.pulls === b.pulls &&
  a.claims === b.claims &&
  a.recentComments === b.recentComments &&
  a.defaultBranch === b.defaultBranch;

/**
 * Facts that a later pass may take again while their view and rows stand: derived without a request beyond the
 * view's and with nothing to write. A repository with claims (its base tips are read every pass, LD02), an issue
 * started by request that the view does not hold (read on its own), asks (their askers' permissions are asked
 * again), a blocked issue (its blockers are listed every pass, BU05) or anything found to write is derived afresh
 * each pass; one with an open request, whatever it names, too (`again`).
 */
export const mayKeep = (f: RepoFacts, wrote: readonly Housekeeping[]): boolean =>
  wrote.length === 0 &&
  f.view.claims.length === 0 &&
  f.startableIssues.size === 0 &&
  !f.asks?.length &&
  !f.view.issues.some((i) => i.graph?.blockedBy);

export class PassMemo {
  private readonly rows = new Map<string, KeptRows>();
  private readonly facts = new Map<string, RepoFacts>();

  /**
   * The store's facts of `repos` for this pass, given each one's version now (read before any of their rows): the
   * rows kept where a version stands, `read` for the rest (and kept, under the version they were read after).
   * Returns the repositories whose rows stood.
   */
  async stored(
    repos: readonly string[],
    versions: ReadonlyMap<string, number>,
    read: (changed: readonly string[]) => Promise<StoredFacts>,
  ): Promise<{ stored: StoredFacts; standing: ReadonlySet<string> }> {
    // A repository no longer listed keeps nothing here.
    if (this.rows.size > repos.length) {
      const listed = new Set(repos);
      for (const name of this.rows.keys()) if (!listed.has(name)) this.forget(name);
    }
    const standing = new Set<string>();
    const changed: string[] = [];
    for (const repo of repos) {
      const kept = this.rows.get(repo);
      if (kept && kept.version === versions.get(repo)) standing.add(repo);
      else changed.push(repo);
    }
    const fresh = await read(changed);
    for (const repo of changed) {
      this.facts.delete(repo);
      this.rows.set(repo, {
        version: versions.get(repo),
        state: fresh.states.get(repo),
        runs: fresh.runs.get(repo) ?? [],
        claims: fresh.claims.get(repo) ?? [],
        afkLabels: fresh.afkLabels.get(repo) ?? [],
        asks: fresh.asks.get(repo) ?? [],
      });
    }
    // What stood is looked up where it is kept: nothing is copied for it.
    const kept = (repo: string) => (standing.has(repo) ? this.rows.get(repo) : undefined);
    const stored: StoredFacts = {
      states: { get: (repo) => fresh.states.get(repo) ?? kept(repo)?.state },
      runs: { get: (repo) => fresh.runs.get(repo) ?? kept(repo)?.runs },
      claims: { get: (repo) => fresh.claims.get(repo) ?? kept(repo)?.claims },
      afkLabels: { get: (repo) => fresh.afkLabels.get(repo) ?? kept(repo)?.afkLabels },
      asks: { get: (repo) => fresh.asks.get(repo) ?? kept(repo)?.asks },
    };
    return { stored, standing };
  }

  /** The facts an earlier pass derived, if the repository's rows stood this pass and the forge gave the same view. */
  again(view: RepoView, standing: ReadonlySet<string>, now: PassWide): RepoFacts | null {
    const name = view.repo.fullName;
    const kept = standing.has(name) ? this.facts.get(name) : undefined;
    if (!kept || !sameView(kept.view, view) || now.requests.length) return null;
    return { ...kept, ...now };
  }

  /** Facts derived this pass, kept for the next when nothing in them asks to be derived again (`mayKeep`). */
  keep(f: RepoFacts, wrote: readonly Housekeeping[]): void {
    if (mayKeep(f, wrote)) this.facts.set(f.repo.fullName, f);
    else this.facts.delete(f.repo.fullName);
  }

  /** A repository no longer listed: nothing of it is kept. */
  private forget(repo: string): void {
    this.rows.delete(repo);
    this.facts.delete(repo);
  }
}
