export interface CapPolicy {
  globalCap: number;
  /** Operator overrides, keyed by lower-case owner/repo. */
  repoCaps: Readonly<Record<string, number>>;
}

/** The repo's operator override, else the global cap. */
export function effectiveCap(policy: CapPolicy, repo: string): number {
  // Without a repository of its own cap (the usual), the name is not looked up: a pass asks this of every repository.
  return anyRepoCap(policy.repoCaps) ? (policy.repoCaps[repo.toLowerCase()] ?? policy.globalCap) : policy.globalCap;
}

const capsGiven = new WeakMap<object, boolean>();
function anyRepoCap(caps: CapPolicy['repoCaps']): boolean {
  let any = capsGiven.get(caps);
  if (any === undefined) {
    any = Object.keys(caps).length > 0;
    capsGiven.set(caps, any);
  }
  return any;
}

/** The fleet-wide live count and the live subjects, taken once per pass. */
export interface LivenessSnapshot {
  liveCount: number;
  liveSubjects: Set<string>;
}

export function isAtCap(snapshot: LivenessSnapshot, policy: CapPolicy, repo: string): boolean {
  return snapshot.liveCount >= effectiveCap(policy, repo);
}
