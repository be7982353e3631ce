import type { Clock, Timers } from '../../kernel/clock.js';
import type { Fence } from '../../kernel/fence.js';
import type { CommentView, Forge, RepoRef } from '../../forge/types.js';
import type { Launcher } from '../../launcher/launcher.js';
import type { Log } from '../../kernel/log.js';
import type { Store } from '../../store/store.js';
import type { Tracer } from '../../kernel/trace.js';
import type { MergeListener } from '../landing/merges.js';
import type { FleetPolicy } from '../context.js';
import type { HandedResults } from '../runs/run-results.js';
import type { PassReport } from './pass.js';

// What an engine is built from: the composition root (app.ts) hands it these.

export interface EngineDeps {
  store: Store;
  forge: Forge;
  launcher: Launcher;
  clock: Clock;
  timers: Timers;
  log: Log;
  policy: FleetPolicy;
  apiUrl: string;
  /** Where people read GitHub (links in check runs and dashboards). */
  webUrl: string;
  /** Logins whose verdict markers count besides yoke's own bot login. */
  trustedMarkerLogins: readonly string[];
  newRunId?: () => string;
  /** TR12: this process's lease id (the composition root registers it). */
  processId?: string;
  /** Told of each claim PR a pass merged (the composition root subscribes delivery here). */
  onMerged?: MergeListener;
  /** Commands found by poll (the composition root wires the command handler here). */
  onPolledComments?: (repo: RepoRef, comments: readonly CommentView[]) => Promise<void>;
  /** Whether this process leads the ticks, asked before each: its epoch's fence, or null (a follower). Without it, it always leads. */
  lead?: () => Promise<Fence | null>;
  /** Runs reach yoke through GitHub (YOKE_RUNS_REACH=github): how the results they hand back are believed. */
  handedResults?: HandedResults;
  /** Told of each pass this process ran, and how long it took in seconds (the metrics). */
  onPass?: (report: PassReport, seconds: number) => void;
  /** Told as each pass begins (the metrics count its requests from here). */
  onPassStart?: () => void;
  /** The tracer of yoke's spans (the no-op unless tracing is on). */
  tracer?: Tracer;
}
