import { isOneOf, keysOf } from '../kernel/guards.js';
import type { Fence } from '../kernel/fence.js';
import type { Forge } from './types.js';

// TR31: the forge a leader's tick works through. Every method that changes
// something on GitHub passes the tick's fence first; reads go straight
// through. The table names every method, so a new one must be sorted here.

const FORGE_ACCESS: Record<keyof Forge, 'read' | 'write'> = {
  botLogin: 'read',
  readInstallation: 'read',
  listSecretNames: 'read',
  readBranchPolicy: 'read',
  listInstallations: 'read',
  authenticate: 'read',
  listRepos: 'read',
  relist: 'read',
  readConfig: 'read',
  readRepo: 'read',
  budgetLeft: 'read',
  standsIn: 'read',
  everRead: 'read',
  invalidate: 'read',
  getIssue: 'read',
  findOpenIssue: 'read',
  getPull: 'read',
  listReviews: 'read',
  listReviewComments: 'read',
  resolveCommit: 'read',
  commitParents: 'read',
  isAncestor: 'read',
  isBranchProtected: 'read',
  readBranchTip: 'read',
  listFiles: 'read',
  readFileAt: 'read',
  readComment: 'read',
  getPermission: 'read',
  labelledBy: 'read',
  listIssuesUpdatedSince: 'read',
  findWorkflowRun: 'read',
  getWorkflowRun: 'read',
  listDeploymentStatuses: 'read',
  readEnvironmentRules: 'read',
  listRunArtifacts: 'read',
  downloadArtifact: 'read',
  listWaitingRuns: 'read',
  listPendingDeployments: 'read',
  createIssue: 'write',
  updateIssue: 'write',
  removeLabel: 'write',
  editComment: 'write',
  createComment: 'write',
  addReaction: 'write',
  addLabels: 'write',
  merge: 'write',
  mergeIntoBranch: 'write',
  requiresMergeQueue: 'read',
  readBranchRules: 'read',
  listBlockers: 'read',
  readMergeQueue: 'read',
  enqueuePullRequest: 'write',
  mintPushToken: 'write',
  openPull: 'write',
  dispatchWorkflow: 'write',
  cancelWorkflowRun: 'write',
  createCheckRun: 'write',
  updateCheckRun: 'write',
  createDeployment: 'write',
  createDeploymentStatus: 'write',
  pinBranch: 'write',
  reviewProtectionRule: 'write',
  publishRunner: 'write',
  moveBranch: 'write',
  deleteBranch: 'write',
};

/** The names of the forge's methods that change something on GitHub. */
export const FORGE_WRITES = keysOf(FORGE_ACCESS).filter((k) => FORGE_ACCESS[k] === 'write');

/** `forge`, with every write checked against `fence` before it is sent. */
export function fencedForge(forge: Forge, fence: Fence): Forge {
  return boundMethods(forge, (name, method) =>
    isOneOf(FORGE_WRITES, name)
      ? async (...args: unknown[]) => {
          await fence.check(name);
          return method(...args);
        }
      : method,
  );
}

/**
 * A proxy of `target` whose methods are bound to it and wrapped by `wrap`, each made once per method, not at every
 * call (a pass calls the forge tens of thousands of times): remade only if the target's method was replaced.
 */
function boundMethods<T extends object>(
  target: T,
  wrap: (name: string | symbol, method: (...args: unknown[]) => unknown) => unknown,
  own: Partial<T> = {},
): T {
  const made = new Map<string | symbol, { of: unknown; as: unknown }>();
  return new Proxy(target, {
    get(t, name) {
      if (Object.hasOwn(own, name)) return Reflect.get(own, name);
      const value: unknown = Reflect.get(t, name, t);
      if (typeof value !== 'function') return value;
      const known = made.get(name);
      if (known?.of === value) return known.as;
      const method: (...args: unknown[]) => unknown = value.bind(t);
      const as = wrap(name, method);
      made.set(name, { of: value, as });
      return as;
    },
  });
}

/**
 * The forge with some of its methods in place of its own; everything else is the forge's own, called on it (its
 * caches stay its own).
 */
export function forgeWith(forge: Forge, own: Partial<Forge>): Forge {
  return boundMethods(forge, (_, method) => method, own);
}
