import { openDb, type Db } from './sql/db.js';
import { isPostgresUrl, printable, requireSqliteFile, urlConnectTimeoutMs } from './sql/open-sql.js';
import { postgresSql, type PostgresOptions } from './sql/postgres-sql.js';
import { migrateSql, SchemaTooNewError } from './sql/schema.js';
import { CheckRunStore } from './fleet/check-runs.js';
import { ProtectedHoldStore } from './fleet/protected-holds.js';
import { AfkLabelStore } from './fleet/afk-labels.js';
import { AskStore } from './fleet/asks.js';
import { DashboardIssueStore } from './fleet/dashboard-issues.js';
import { ClaimStore } from './fleet/claims.js';
import { CloseoutStore } from './delivery/closeouts.js';
import { CommandStore } from './fleet/commands.js';
import { DeliveryStore } from './delivery/deliveries.js';
import { DeliveryItemStore } from './delivery/delivery-items.js';
import { DeploymentRunStore } from './delivery/deployment-runs.js';
import { DispatchRequestStore } from './delivery/dispatch-requests.js';
import { ExecutionStore } from './delivery/executions.js';
import { HttpCacheStore } from './http-cache.js';
import { MergeStore } from './fleet/merges.js';
import { SpendStore } from './fleet/spend.js';
import { MoneyNoticeStore } from './fleet/money-notices.js';
import { IssueTraceStore } from './fleet/issue-traces.js';
import { FigureStore } from './fleet/figures.js';
import { EnqueueStore } from './fleet/enqueues.js';
import { ProcessStore } from './processes.js';
import { QaLabelStore } from './delivery/qa-labels.js';
import { RunNoticeStore } from './fleet/run-notices.js';
import { NoticeStore } from './delivery/notices.js';
import { QaStore } from './delivery/qa.js';
import { RepoStore } from './fleet/repos.js';
import { RequestStore } from './fleet/requests.js';
import { RunStore } from './fleet/runs.js';
import { StageDeploymentRunStore } from './delivery/stage-deployments.js';
import { WorkLockStore } from './work-locks.js';
import { LeaderStore } from './leaders.js';
import { InstallationLeaseStore } from './installation-leases.js';
import { SharedReadStore } from './shared-reads.js';
import { RateHoldStore } from './rate-holds.js';
import { databaseClock, LOCKS, type LeaseClock, type Sql } from './sql/sql.js';
import { sqliteSql } from './sql/sqlite-sql.js';
import { errorText } from '../kernel/error-text.js';

export interface Store {
  /** The database, through the async interface both engines share. */
  sql: Sql;
  /** Who leads the fleet's ticks (async, over sql). */
  leaders: LeaderStore;
  /** SC08: which process reads each installation. */
  installationLeases: InstallationLeaseStore;
  sharedReads: SharedReadStore;
  rateHolds: RateHoldStore;
  repos: RepoStore;
  runs: RunStore;
  claims: ClaimStore;
  commands: CommandStore;
  requests: RequestStore;
  merges: MergeStore;
  /** What runs cost, and what the budgets hold (BU01, BU02). */
  spend: SpendStore;
  /** BU03: the claim PRs told their fix waits for money. */
  moneyNotices: MoneyNoticeStore;
  issueTraces: IssueTraceStore;
  figures: FigureStore;
  /** LD04: the claim PRs yoke added to GitHub's merge queue. */
  enqueues: EnqueueStore;
  httpCache: HttpCacheStore;
  deliveries: DeliveryStore;
  deliveryItems: DeliveryItemStore;
  /** Deployment runs (QA09 and on): their stages, members and the driver's lease. */
  deploymentRuns: DeploymentRunStore;
  qa: QaStore;
  notices: NoticeStore;
  closeouts: CloseoutStore;
  executions: ExecutionStore;
  dispatchRequests: DispatchRequestStore;
  workLocks: WorkLockStore;
  checkRuns: CheckRunStore;
  /** TR14: claim heads that change a protected path, held for a person. */
  protectedHolds: ProtectedHoldStore;
  /** TR24: AFK issues' bodies as first seen labelled. */
  afkLabels: AfkLabelStore;
  /** TR33: what writers asked an agent to do (reviews requesting changes, /yoke fix, /yoke start with text). */
  asks: AskStore;
  dashboardIssues: DashboardIssueStore;
  processes: ProcessStore;
  qaLabels: QaLabelStore;
  runNotices: RunNoticeStore;
  /** DP01, DP03: stages' GitHub deployments, and the protection rule's answers. */
  stageDeployments: StageDeploymentRunStore;
  /** Runs fn in one write transaction (the cross-process backstop), handing it the store bound to that transaction: everything inside goes through it. */
  write<T>(fn: (s: Store) => T | Promise<T>): Promise<T>;
  /** SP08: holds the fleet's one pass lock (every process on the database) until the release is called. */
  holdPassLock(): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** The embedded store: a SQLite file (or `:memory:`), migrated as it opens; a newer yoke's file is refused (SchemaTooNewError). */
export function openStore(path: string, opts: { busyTimeoutMs?: number; leaseClock?: LeaseClock } = {}): Store {
  return storeOver(sqliteSql(openDb(path, opts)), undefined, opts.leaseClock);
}

/** What the server's PostgreSQL connections wait at most: for a lock (the busy answer lock_timeout), and for a statement (statement_cancelled). */
export const POSTGRES_DEFAULTS: PostgresOptions = {
  lockTimeoutMs: 5_000,
  statementTimeoutMs: 30_000,
  connectTimeoutMs: 10_000,
};

/**
 * The store a database names: a postgres:// URL is PostgreSQL, anything else a
 * SQLite file. Either is migrated before it is used, and a schema newer than
 * this yoke knows is refused (SchemaTooNewError) before anything reads it.
 */
export async function openStoreAt(
  target: string,
  opts: { busyTimeoutMs?: number; postgres?: PostgresOptions; mustExist?: boolean } = {},
): Promise<Store> {
  if (!isPostgresUrl(target)) {
    if (opts.mustExist) requireSqliteFile(target, ', or its postgres:// URL');
    try {
      return openStore(target, opts);
    } catch (err) {
      if (err instanceof SchemaTooNewError) throw err;
      throw new Error(
        `yoke could not open its SQLite store at ${target}: ${errorText(err)}. Set YOKE_DB_PATH to a file in a folder yoke may write (it makes the folder), or YOKE_DATABASE_URL to a PostgreSQL database.`,
      );
    }
  }
  // As SQLite's busy timeout bounds a wait for its write lock, lock_timeout bounds PostgreSQL's; a statement that runs away is cancelled.
  // libpq's connect_timeout, where the URL gives one, is the operator's word on the connection's wait.
  const connectTimeoutMs =
    urlConnectTimeoutMs(target) ?? opts.postgres?.connectTimeoutMs ?? POSTGRES_DEFAULTS.connectTimeoutMs;
  const sql = postgresSql(target, { ...POSTGRES_DEFAULTS, ...opts.postgres, connectTimeoutMs });
  try {
    await migrateSql(sql);
  } catch (err) {
    await sql.close();
    if (err instanceof SchemaTooNewError) throw err;
    if (/timeout/i.test(errorText(err)))
      throw new Error(
        `yoke could not open its PostgreSQL store at ${printable(target)}: it took the connection and did not answer within ${(connectTimeoutMs ?? 0) / 1000} s. Check that YOKE_DATABASE_URL names the PostgreSQL server's host and port (not another service's), and that no firewall holds the connection.`,
      );
    throw new Error(
      `yoke could not open its PostgreSQL store at ${printable(target)}: ${errorText(err)}. Check YOKE_DATABASE_URL, and that the server is up and takes that user.`,
    );
  }
  return storeOver(sql);
}

export function wrapDb(db: Db): Store {
  return storeOver(sqliteSql(db));
}

/**
 * The store over a database; `within` binds it to an open transaction instead.
 * Leases read `leaseClock`: the database's own, or a test's stand-in for it.
 */
export function storeOver(outer: Sql, within?: Sql, leaseClock: LeaseClock = databaseClock): Store {
  const sql = within ?? outer;
  // SQLite's transaction handle is one and the same each time: so is the store bound to it.
  let bound: { tx: Sql; store: Store } | null = null;
  const storeIn = (tx: Sql): Store =>
    bound?.tx === tx ? bound.store : (bound = { tx, store: storeOver(outer, tx, leaseClock) }).store;
  const leaseNow = () => leaseClock(sql);
  return {
    sql,
    leaders: new LeaderStore(sql, leaseNow),
    installationLeases: new InstallationLeaseStore(sql, leaseNow),
    sharedReads: new SharedReadStore(sql, leaseNow),
    rateHolds: new RateHoldStore(sql),
    repos: new RepoStore(sql),
    runs: new RunStore(sql),
    claims: new ClaimStore(sql),
    commands: new CommandStore(sql),
    requests: new RequestStore(sql),
    merges: new MergeStore(sql),
    spend: new SpendStore(sql),
    moneyNotices: new MoneyNoticeStore(sql),
    issueTraces: new IssueTraceStore(sql),
    figures: new FigureStore(sql),
    enqueues: new EnqueueStore(sql),
    httpCache: new HttpCacheStore(sql),
    deliveries: new DeliveryStore(sql),
    deliveryItems: new DeliveryItemStore(sql),
    deploymentRuns: new DeploymentRunStore(sql),
    qa: new QaStore(sql),
    notices: new NoticeStore(sql),
    closeouts: new CloseoutStore(sql, leaseNow),
    executions: new ExecutionStore(sql),
    dispatchRequests: new DispatchRequestStore(sql, leaseNow),
    workLocks: new WorkLockStore(sql),
    checkRuns: new CheckRunStore(sql),
    protectedHolds: new ProtectedHoldStore(sql),
    afkLabels: new AfkLabelStore(sql),
    asks: new AskStore(sql),
    dashboardIssues: new DashboardIssueStore(sql),
    processes: new ProcessStore(sql, leaseNow),
    qaLabels: new QaLabelStore(sql),
    runNotices: new RunNoticeStore(sql),
    stageDeployments: new StageDeploymentRunStore(sql),
    write: <T>(fn: (s: Store) => T | Promise<T>): Promise<T> => sql.transaction(async (tx) => fn(storeIn(tx))),
    holdPassLock: () => outer.hold(LOCKS.pass),
    close: () => outer.close(),
  };
}
