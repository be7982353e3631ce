import type { Clock } from '../kernel/clock.js';
import type { CommentView, Forge, RepoRef } from '../forge/types.js';
import type { Launcher } from '../launcher/launcher.js';
import type { Log } from '../kernel/log.js';
import type { Tracer } from '../kernel/trace.js';
import type { Store } from '../store/store.js';
import type { MergeListener } from './merges.js';
import type { CheckRefusals } from './check-runs.js';
import type { RepoActivity } from './activity.js';
import type { FleetPolicy } from './context.js';

// What a spawn pass works with: the engine hands a pass these (engine.ts passDeps).

/** What a full read of one repository costs, in points: the probe, the repository, issues, PRs, comments, config. */
export const READ_ESTIMATE_POINTS = 6;

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
}
