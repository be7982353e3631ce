import type { Clock } from '../../kernel/clock.js';
import type { CommentView, Forge, RepoRef } from '../../forge/types.js';
import type { Launcher } from '../../launcher/launcher.js';
import type { Log } from '../../kernel/log.js';
import type { Tracer } from '../../kernel/trace.js';
import type { Store } from '../../store/store.js';
import type { MergeListener } from '../landing/merges.js';
import type { CheckRefusals } from '../landing/check-runs.js';
import type { RepoActivity } from '../activity.js';
import type { FleetPolicy } from '../context.js';
import type { PassMemo } from './pass-memo.js';

// What a spawn pass works with: the engine hands a pass these (engine.ts passDeps).

/**
 * What a full read of one repository spends on its busiest endpoint, in points: the probe and the labelled
 * issues both list the repository's issues (every other request of a read has an endpoint of its own).
 */
export const READ_ESTIMATE_POINTS = 2;

export interface PassDeps {
  store: Store;
  forge: Forge;
  launcher: Launcher;
  clock: Clock;
  log: Log;
  policy: FleetPolicy;
  apiUrl: string;
  webUrl: string;
  /** Installations whose check run writes wait after a refusal. */
  checkRefusals: CheckRefusals;
  newRunId: () => string;
  /** yoke's bot login and the operator-trusted logins whose markers count, lower-case. */
  trustedLogins: () => Promise<ReadonlySet<string>>;
  /** Which repository goes first within each stage this pass (SC04); the engine advances it. */
  rotation?: number;
  /** What the engine remembers of each repository's activity, for the poll tiers (SC02). */
  activity?: RepoActivity;
  /** Commands found by poll, handed the newest comments of each repo the pass read. */
  onPolledComments?: (repo: RepoRef, comments: readonly CommentView[]) => Promise<void>;
  /** Told of each claim PR the pass merged. */
  onMerged?: MergeListener;
  /** The tracer of yoke's spans (the no-op unless tracing is on). */
  tracer?: Tracer;
  /** Aborted when yoke stops: the pass reads no further repository and launches nothing more. */
  stopping?: AbortSignal;
  /** SC10: what the engine's earlier passes found, taken again where nothing changed (none: all is read afresh). */
  memo?: PassMemo;
}

/** A pass stopped where it stood because yoke is stopping (SP10: the next pass, on whichever yoke leads, re-derives it). */
export class PassStopped extends Error {
  constructor() {
    super('yoke is stopping: the pass stopped where it stood');
    this.name = 'PassStopped';
  }
}

/** Between a pass's steps: once yoke is stopping, the pass goes no further. */
export function goOn(deps: Pick<PassDeps, 'stopping'>): void {
  if (deps.stopping?.aborted) throw new PassStopped();
}

/** SC09: a repository of an installation another process reads, whose view it has not shared yet: the pass defers it. */
export class NotShared extends Error {
  constructor(
    readonly repo: string,
    readonly installationId: number,
    readonly reader: string,
  ) {
    super(`${repo} is read by yoke process ${reader}, which has not shared its view yet`);
  }
}
