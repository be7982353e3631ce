import { fieldOf, isOneOf, keysOf } from '../../kernel/guards.js';
import FindMyWay from 'find-my-way';
import { z } from 'zod';
import { DispatchEnvelope } from '../../delivery/gate/idempotent-check.js';
import { CheckinBody, ExecutionBody, RenewBody } from '../../delivery/runs/executions.js';
import { DeployReport } from '../../delivery/deployments/deploy-stage.js';
import { QaTarget, VerdictBody, WaiveBody } from '../../delivery/gate/verdicts.js';
import * as A from './answers.js';
import { route, type RouteDef } from './route-def.js';
import { WEB_ROUTES } from './routes-web.js';
import { AutoBody, CreateBody, RemoveBody, SettleBody } from './bodies.js';

// Every route yoke serves, once, with who may call it (TR25). The handlers
// dispatch as before; before any of them runs, the route's role is checked
// against the credential, and a person's against what GitHub says their
// login may do on the route's repository, asked at the time.

export type { RepoFrom, RouteDef, RouteRole } from './route-def.js';

const DR = '/yoke/api/deployment-runs/:run';
const STAGE = `${DR}/stages/:stage`;
/** What `GET /yoke/api/runs?status=` and `yoke runs list --status` take. */
export const RUN_STATUSES = ['live', 'success', 'failure', 'timeout', 'cancelled'] as const;

/** Every route yoke serves, by name; the CLI calls them by the same names. */
export const ROUTE = {
  ...WEB_ROUTES,
  health: route({
    method: 'GET',
    path: '/yoke/api/health',
    role: 'public',
    repo: 'none',
    what: 'Asking whether yoke is up',
    answer: A.OkAnswer,
  }),
  runner: route({
    method: 'GET',
    path: '/yoke/runner.mjs',
    role: 'public',
    repo: 'none',
    what: "Fetching yoke's runner",
    answer: null,
  }),
  // A run's own reports parse their bodies after the run is authenticated, in http/api/run-report.ts.
  push: route({
    method: 'POST',
    path: '/yoke/api/runs/:run/push',
    role: 'run-report',
    repo: 'none',
    what: 'Asking for a push token',
    answer: A.PushAnswer,
  }),
  claim: route({
    method: 'POST',
    path: '/yoke/api/runs/:run/claim',
    role: 'run-report',
    repo: 'none',
    what: 'Opening a claim PR',
    answer: A.ClaimAnswer,
  }),
  result: route({
    method: 'POST',
    path: '/yoke/api/runs/:run/result',
    role: 'run-report',
    repo: 'none',
    what: "Reporting a run's result",
    answer: A.RunReportedAnswer,
  }),
  fleet: route({
    method: 'GET',
    path: '/yoke/api/fleet',
    role: 'operator',
    repo: 'none',
    what: 'Reading the fleet report',
    answer: A.FleetReportAnswer,
  }),
  runs: route({
    method: 'GET',
    path: '/yoke/api/runs',
    role: 'read',
    repo: 'listing',
    what: 'Listing runs',
    query: z.looseObject({ repo: z.string().optional(), status: z.enum(RUN_STATUSES).optional() }),
    hint: `status is one of ${RUN_STATUSES.join(', ')}`,
    answer: A.RunListAnswer,
  }),
  run: route({
    method: 'GET',
    path: '/yoke/api/runs/:run',
    role: 'read',
    repo: 'yoke-run',
    what: 'Reading a run',
    answer: A.RunAnswer,
  }),
  settle: route({
    method: 'POST',
    path: '/yoke/api/runs/:run/settle',
    role: 'operator',
    repo: 'yoke-run',
    what: 'Settling what a run spent',
    body: SettleBody,
    hint: 'send {"usd": 1.25}: what the run spent, in dollars, from 0 up',
    answer: A.MessageAnswer,
  }),
  repoStatus: route({
    method: 'GET',
    path: '/yoke/api/repos/:owner/:name/status',
    role: 'read',
    repo: 'path',
    what: "Reading a repository's status",
    answer: A.MessageAnswer,
  }),
  nextPass: route({
    method: 'GET',
    path: '/yoke/api/repos/:owner/:name/plan',
    role: 'read',
    repo: 'path',
    what: 'Reading what the next pass would do',
    answer: A.NextPassAnswer,
  }),
  doctor: route({
    method: 'GET',
    path: '/yoke/api/repos/:owner/:name/doctor',
    role: 'maintain',
    repo: 'path',
    what: "Checking a repository's set-up",
    answer: A.DoctorAnswer,
  }),
  auto: route({
    method: 'POST',
    path: '/yoke/api/repos/:owner/:name/auto',
    role: 'write',
    repo: 'path',
    what: 'Switching the auto loop',
    body: AutoBody,
    hint: 'send {"enabled": true} or {"enabled": false}',
    answer: A.MessageAnswer,
  }),
  reset: route({
    method: 'POST',
    path: '/yoke/api/repos/:owner/:name/reset',
    role: 'write',
    repo: 'path',
    what: 'Resetting a repository',
    answer: A.MessageAnswer,
  }),
  start: route({
    method: 'POST',
    path: '/yoke/api/repos/:owner/:name/issues/:number/start',
    role: 'write',
    repo: 'path',
    what: 'Starting work on an issue',
    answer: A.MessageAnswer,
  }),
  land: route({
    method: 'POST',
    path: '/yoke/api/repos/:owner/:name/pulls/:number/land',
    role: 'write',
    repo: 'path',
    what: 'Landing a claim PR',
    answer: A.MessageAnswer,
  }),
  deploymentRuns: route({
    method: 'GET',
    path: '/yoke/api/deployment-runs',
    role: 'read',
    repo: 'listing',
    what: 'Listing deployment runs',
    query: z.looseObject({ repo: z.string().optional(), item: z.string().optional() }),
    answer: A.DeploymentRunListAnswer,
  }),
  createDeploymentRun: route({
    method: 'POST',
    path: '/yoke/api/deployment-runs',
    role: 'write',
    repo: 'body',
    what: 'Creating a deployment run',
    body: CreateBody,
    answer: A.DeploymentViewAnswer,
  }),
  deploymentRun: route({
    method: 'GET',
    path: DR,
    role: 'read',
    repo: 'deployment-run',
    what: 'Reading a deployment run',
    answer: A.DeploymentViewAnswer,
  }),
  // A recorded gate check's answer, replayed byte for byte: what was recorded is the gate check's answer or a refusal.
  gateCheckResult: route({
    method: 'GET',
    path: `${DR}/requests/:request`,
    role: 'read',
    repo: 'deployment-run',
    what: "Reading a gate check's result",
    query: z.looseObject({ wait: z.string().optional() }),
    answer: A.GateCheckAnswer,
  }),
  checkin: route({
    method: 'POST',
    path: `${DR}/checkin`,
    role: 'write',
    repo: 'deployment-run',
    what: 'Driving a deployment run',
    body: CheckinBody,
    answer: A.CheckinAnswer,
  }),
  endExecution: route({
    method: 'POST',
    path: `${DR}/executions/:execution/end`,
    role: 'write',
    repo: 'deployment-run',
    what: 'Ending a plan execution',
    answer: A.ExecutionEnded,
  }),
  renewExecution: route({
    method: 'POST',
    path: `${DR}/executions/:execution/renew`,
    role: 'write',
    repo: 'deployment-run',
    what: 'Renewing a plan execution',
    body: RenewBody,
    answer: A.ExecutionRenewed,
  }),
  removeMember: route({
    method: 'POST',
    path: `${DR}/members/:item/remove`,
    role: 'maintain',
    repo: 'deployment-run',
    what: 'Removing a member',
    body: RemoveBody,
    answer: A.DeploymentViewAnswer,
  }),
  qaWork: route({
    method: 'GET',
    path: `${STAGE}/work`,
    role: 'read',
    repo: 'deployment-run',
    run: true,
    what: "Reading a stage's QA work",
    query: QaTarget,
    answer: A.QaWorkAnswer,
  }),
  gateCheck: route({
    method: 'POST',
    path: `${STAGE}/dispatch`,
    role: 'write',
    repo: 'deployment-run',
    what: 'Gate-checking a stage',
    body: DispatchEnvelope,
    answer: A.GateCheckAnswer,
  }),
  verdict: route({
    method: 'POST',
    path: `${STAGE}/verdicts`,
    role: 'write',
    repo: 'deployment-run',
    run: true,
    what: 'Recording a QA verdict',
    body: VerdictBody,
    answer: A.VerdictRecorded,
  }),
  waive: route({
    method: 'POST',
    path: `${STAGE}/waive`,
    role: 'maintain',
    repo: 'deployment-run',
    what: 'Waiving a QA case',
    body: WaiveBody,
    answer: A.VerdictRecorded,
  }),
  deploy: route({
    method: 'POST',
    path: `${STAGE}/deploy`,
    role: 'write',
    repo: 'deployment-run',
    what: 'Reporting a deploy stage',
    body: DeployReport,
    answer: A.DeployStepAnswer,
  }),
  startExecution: route({
    method: 'POST',
    path: `${STAGE}/executions`,
    role: 'write',
    repo: 'deployment-run',
    what: 'Starting a plan execution',
    body: ExecutionBody,
    answer: A.ExecutionStarted,
  }),
} as const;

export type RouteName = keyof typeof ROUTE;
export const ROUTES: readonly RouteDef[] = Object.values(ROUTE);

const PARAM: Record<string, string> = {
  owner: '[\\w.-]+',
  name: '[\\w.-]+',
  number: '\\d+',
  run: '[\\w-]{1,100}',
  request: '[\\w.:-]{1,100}',
  execution: '[\\w-]{1,40}',
  item: '[\\w-]{1,30}',
  stage: '[\\w-]{1,40}',
};

export interface MatchedRoute {
  name: RouteName;
  def: RouteDef;
  params: Record<string, string>;
}

/** One router for the whole table; a parameter must also match its pattern, or the route is not found. */
const ROUTER = FindMyWay({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: false });
for (const [name, def] of Object.entries(ROUTE)) ROUTER.on(def.method, def.path, () => undefined, { name });
const PARAM_RE = Object.fromEntries(Object.entries(PARAM).map(([n, p]) => [n, new RegExp(`^(?:${p})$`)]));

/** The route a request is for, with its parameters; null when yoke serves no such route. */
export function matchRoute(method: string, path: string): MatchedRoute | null {
  if (method !== 'GET' && method !== 'POST') return null;
  const found = ROUTER.find(method, path);
  if (!found) return null;
  const params: Record<string, string> = {};
  for (const [n, v] of Object.entries(found.params)) {
    if (v === undefined || !(PARAM_RE[n] ?? /^[^/]+$/).test(v)) return null;
    params[n] = v;
  }
  const name = fieldOf(found.store, 'name');
  if (!isOneOf(keysOf(ROUTE), name)) return null;
  return { name, def: ROUTE[name], params };
}

/** A route's path with its parameters filled in, each encoded. */
export function routePath(def: RouteDef, params: Record<string, string | number> = {}): string {
  return def.path.replace(/:(\w+)/g, (_m, n: string) => {
    if (params[n] === undefined) throw new Error(`${def.path} needs :${n}`);
    return encodeURIComponent(String(params[n]));
  });
}
