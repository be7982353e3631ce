import { parseActionsRef } from '../../launcher/actions.js';
import type { Run } from '../../store/fleet/runs.js';
import { parseSubject } from '../../kernel/ids.js';

// Where people read what yoke works on: GitHub's own pages (github.com, a
// GitHub Enterprise host, or the sandbox's forge), under one web URL.

export const repoUrl = (webUrl: string, repo: string): string => `${webUrl}/${repo}`;

export const issueUrl = (webUrl: string, repo: string, n: number): string => `${webUrl}/${repo}/issues/${n}`;

export const pullUrl = (webUrl: string, repo: string, n: number): string => `${webUrl}/${repo}/pull/${n}`;

/** An environment's deployments page (DP01): where GitHub shows each deployment to it with its statuses. */
export const environmentUrl = (webUrl: string, repo: string, environment: string): string =>
  `${webUrl}/${repo}/deployments/${encodeURIComponent(environment)}`;

/** `issue#N` or `pr#N`, as a link to its page. */
export function subjectUrl(webUrl: string, repo: string, subject: string): string | null {
  const s = parseSubject(subject);
  if (!s) return null;
  return s.kind === 'issue' ? issueUrl(webUrl, repo, s.number) : pullUrl(webUrl, repo, s.number);
}

/** The workflow run of a run launched on GitHub Actions, once yoke knows its id; null otherwise. */
export function runUrl(webUrl: string, run: Pick<Run, 'repo' | 'launcher' | 'launcherRef'>): string | null {
  if (run.launcher !== 'actions') return null;
  const ref = parseActionsRef(run.launcherRef);
  return ref?.id ? `${webUrl}/${run.repo}/actions/runs/${ref.id}` : null;
}
