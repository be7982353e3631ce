import type { Fence } from '../kernel/fence.js';
import type { Launcher } from './launcher.js';

// TR31: the launcher a leader's tick works through: a start or a cancel
// passes the tick's fence first.

export function fencedLauncher(launcher: Launcher, fence: Fence): Launcher {
  return {
    name: launcher.name,
    usesSecret: (kind) => launcher.usesSecret(kind),
    pendingRef: (spec) => launcher.pendingRef(spec),
    liveness: (run, repo) => launcher.liveness(run, repo),
    start: async (spec) => {
      await fence.check(`launching run ${spec.runId}`);
      return launcher.start(spec);
    },
    cancel: async (run, repo) => {
      await fence.check(`cancelling run ${run.id}`);
      return launcher.cancel(run, repo);
    },
  };
}
