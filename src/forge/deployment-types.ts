// What the forge reads and writes of GitHub's deployments and environments (DP01-DP05), apart from the
// fleet's shapes in types.ts.

/** DP01: a deployment yoke creates for a deploy stage, at the run's pinned commit. */
export interface DeploymentWrite {
  sha: string;
  environment: string;
  description: string;
  payload: Record<string, unknown>;
  requiredContexts: string[];
}

export type DeploymentCreated = { ok: true; id: number } | { ok: false; status: number | null; message: string };

export type DeploymentStatusState = 'in_progress' | 'success' | 'failure' | 'error' | 'inactive';

export interface DeploymentStatusWrite {
  state: DeploymentStatusState;
  description: string;
  logUrl?: string | null;
  environmentUrl?: string | null;
}

/** One status of a deployment, newest first as GitHub lists them. */
export interface DeploymentStatusView {
  state: string;
  /** Who wrote it: yoke's bot, or a workflow's `github-actions[bot]`. */
  creator: string | null;
  logUrl: string | null;
  environmentUrl: string | null;
}

/** An environment as the protection rule needs it: whether it exists, and the apps whose custom rules it has enabled. */
export type EnvironmentRules = { exists: false } | { exists: true; ruleApps: string[] };

/** What the app's installation on a repository grants: its permissions (`contents: write`) and the events it receives. */
export interface InstallationGrants {
  id: number;
  permissions: Record<string, string>;
  events: string[];
}

/** Which branches may deploy to an environment: any, protected ones only, or the name patterns listed. */
export type BranchPolicy = { kind: 'all' } | { kind: 'protected' } | { kind: 'custom'; branches: string[] };

/** DP03: yoke's answer to a deployment_protection_rule request. */
export interface ProtectionAnswer {
  environment: string;
  state: 'approved' | 'rejected';
  comment: string;
}
