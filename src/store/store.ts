import { openDb, type Db } from './db.js';
import { CheckRunStore } from './check-runs.js';
import { DashboardIssueStore } from './dashboard-issues.js';
import { ClaimStore } from './claims.js';
import { CloseoutStore } from './closeouts.js';
import { CommandStore } from './commands.js';
import { DeliveryStore } from './deliveries.js';
import { DeliveryItemStore } from './delivery-items.js';
import { DeploymentStore } from './deployments.js';
import { DispatchRequestStore } from './dispatch-requests.js';
import { ExecutionStore } from './executions.js';
import { HttpCacheStore } from './http-cache.js';
import { MergeStore } from './merges.js';
import { ProcessStore } from './processes.js';
import { QaLabelStore } from './qa-labels.js';
import { RunNoticeStore } from './run-notices.js';
import { NoticeStore } from './notices.js';
import { QaStore } from './qa.js';
import { RepoStore } from './repos.js';
import { RequestStore } from './requests.js';
import { RunStore } from './runs.js';
import { WorkLockStore } from './work-locks.js';
import { LeaderStore } from './leaders.js';
import type { Sql } from './sql.js';
import { sqliteSql } from './sqlite-sql.js';

export interface Store {
  db: Db;
  /** The same database through the async interface both engines share (what is ported to it so far uses it). */
  sql: Sql;
  /** Who leads the fleet's ticks (async, over sql). */
  leaders: LeaderStore;
  repos: RepoStore;
  runs: RunStore;
  claims: ClaimStore;
  commands: CommandStore;
  requests: RequestStore;
  merges: MergeStore;
  httpCache: HttpCacheStore;
  deliveries: DeliveryStore;
  deliveryItems: DeliveryItemStore;
  deployments: DeploymentStore;
  qa: QaStore;
  notices: NoticeStore;
  closeouts: CloseoutStore;
  executions: ExecutionStore;
  dispatchRequests: DispatchRequestStore;
  workLocks: WorkLockStore;
  checkRuns: CheckRunStore;
  dashboardIssues: DashboardIssueStore;
  processes: ProcessStore;
  qaLabels: QaLabelStore;
  runNotices: RunNoticeStore;
  /** Runs fn in one write transaction (the cross-process backstop), handing it the store bound to that transaction: everything inside goes through it. */
  write<T>(fn: (s: Store) => T | Promise<T>): Promise<T>;
  close(): void;
}

export function openStore(path: string, opts: { busyTimeoutMs?: number } = {}): Store {
  return wrapDb(openDb(path, opts));
}

/** The store over a database; `within` binds it to an open transaction instead. */
export function wrapDb(db: Db, within?: Sql): Store {
  const sql = within ?? sqliteSql(db);
  // SQLite's transaction handle is one and the same each time: so is the store bound to it.
  let bound: { tx: Sql; store: Store } | null = null;
  const storeIn = (tx: Sql): Store => (bound?.tx === tx ? bound.store : (bound = { tx, store: wrapDb(db, tx) }).store);
  return {
    db,
    sql,
    leaders: new LeaderStore(sql),
    repos: new RepoStore(db),
    runs: new RunStore(db),
    claims: new ClaimStore(sql),
    commands: new CommandStore(sql),
    requests: new RequestStore(sql),
    merges: new MergeStore(sql),
    httpCache: new HttpCacheStore(sql),
    deliveries: new DeliveryStore(sql),
    deliveryItems: new DeliveryItemStore(sql),
    deployments: new DeploymentStore(db),
    qa: new QaStore(db),
    notices: new NoticeStore(sql),
    closeouts: new CloseoutStore(sql),
    executions: new ExecutionStore(sql),
    dispatchRequests: new DispatchRequestStore(sql),
    workLocks: new WorkLockStore(sql),
    checkRuns: new CheckRunStore(sql),
    dashboardIssues: new DashboardIssueStore(sql),
    processes: new ProcessStore(sql),
    qaLabels: new QaLabelStore(sql),
    runNotices: new RunNoticeStore(sql),
    write: <T>(fn: (s: Store) => T | Promise<T>): Promise<T> => sql.transaction(async (tx) => fn(storeIn(tx))),
    close: () => db.close(),
  };
}
