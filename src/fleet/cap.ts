export interface CapPolicy {
  globalCap: number;
  /** Operator overrides, keyed by lower-case owner/repo. */
  repoCaps: Readonly<Record<string, number>>;
}

/** The repo's operator override, else the global cap. */
export function effectiveCap(policy: CapPolicy, repo: string): number {
  return policy.repoCaps[repo.toLowerCase()] ?? policy.globalCap;
}

/** The fleet-wide live count and the live subjects, taken once per pass. */
export interface LivenessSnapshot {
  liveCount: number;
  liveSubjects: Set<string>;
}

export function isAtCap(snapshot: LivenessSnapshot, policy: CapPolicy, repo: string): boolean {
  return snapshot.liveCount >= effectiveCap(policy, repo);
}
