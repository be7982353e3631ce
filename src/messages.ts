import { makeRefusal, type Refusal } from './codes.js';
import { STUCK_LABEL } from './fleet/repo-facts.js';
import { encodeMarker, type MarkerPayload } from './forge/marker.js';

// Every comment yoke writes, and every "To recover" line, comes from here.
// Refusals take their wording from the code table; tests compare whole texts,
// so a change of wording is a deliberate change of this file.

/** A refusal as people read it: what happened, then the command that recovers. */
export function refusalText(r: Refusal): string {
  return `${r.message}\n\n**To recover:** ${r.recovery}`;
}

/** The reply to a comment command: it mentions the commenter once. */
export function commandReply(author: string, text: string): string {
  return `@${author} ${text}`;
}

export function startQueued(issue: number): string {
  return `Queued a manual AFK run for #${issue}; it launches on the next pass with a free slot.`;
}

export function landQueued(pr: number): string {
  return `Queued a lander for #${pr} at its current head; it launches on the next pass with a free slot.`;
}

export function autoLoopSet(repo: string, on: boolean, paused: boolean): string {
  return `The auto loop of ${repo} is ${on ? 'on' : 'off'}.${paused ? ' It stays paused until `/yoke reset`.' : ''}`;
}

export function repoReset(repo: string, failuresCleared: number, wasPaused: boolean): string {
  return `Reset ${repo}: ${failuresCleared} consecutive failures cleared${wasPaused ? ' and the pause lifted' : ''}.`;
}

export interface StatusFacts {
  repo: string;
  autoLoop: boolean;
  pausedSince: number | null;
  failures: number;
  pauseThreshold: number;
  cap: number;
  liveFleetWide: number;
  autoland: boolean;
  fixForward: boolean;
  live: { id: string; kind: string; subject: string; deadline: number }[];
}

export function repoStatusReport(s: StatusFacts): string {
  const paused = s.pausedSince !== null ? ` (paused since ${new Date(s.pausedSince).toISOString()}; recover with \`/yoke reset\`)` : '';
  return [
    `**yoke status for ${s.repo}**`,
    `- auto loop: ${s.autoLoop ? 'on' : 'off'}${paused}`,
    `- consecutive AFK failures: ${s.failures} of ${s.pauseThreshold}`,
    `- cap: ${s.cap}; live runs fleet-wide: ${s.liveFleetWide}`,
    `- autoland: ${s.autoland ? 'on' : 'off'}; fix-forward: ${s.fixForward ? 'on' : 'off'}`,
    ...s.live.map((r) => `- live: \`${r.id}\` ${r.kind} on ${r.subject}, deadline ${new Date(r.deadline).toISOString()}`),
  ].join('\n');
}

/** SP15: posted on the issue whose AFK failure paused the repository. */
export function pauseNotice(repo: string, failures: number, threshold: number): string {
  const r = makeRefusal('repo_paused', { repo, threshold });
  return `yoke paused ${repo} after ${failures} consecutive AFK failures: the auto loop is stopped and manual starts are refused until someone resets it.\n\n**To recover:** ${r.recovery}`;
}

/** GH01: posted once per reason on the repository's control issue. */
export function disabledNotice(repo: string, reason: string): string {
  return `yoke has disabled ${repo}: ${reason}\n\n**To recover:** ${makeRefusal('repo_disabled', { repo, detail: reason }).recovery}`;
}

export function mergeRefusedNotice(pr: number, sha: string, detail: string): string {
  return `yoke did not merge this PR. ${refusalText(makeRefusal('merge_refused', { number: pr, sha: sha.slice(0, 7), detail }))}`;
}

export function fixExhaustedNotice(author: string | null, pr: number, attempts: number): string {
  const r = makeRefusal('fix_attempts_exhausted', { number: pr, attempts });
  return `@${author ?? 'maintainers'} ${r.message} yoke has stopped fixing it and labelled it \`${STUCK_LABEL}\`.\n\n**To recover:** ${r.recovery}`;
}

/** The public record of a lander's verdict: the marker line, then its summary. */
export function verdictComment(payload: MarkerPayload, summary: string | null): string {
  return encodeMarker(payload, summary ?? '');
}
