import type { Run } from '../../store/fleet/runs.js';

// The dashboard's timeline: every run of the window as a bar in a slot.
// Slots are handed out in launch order, each run taking the lowest slot free
// at its launch, so the number of slots in use is the most runs that were
// live at once. A run that would need a slot beyond the cap shows in a row of
// its own, marked over cap: the cap at work, or a breach, can be seen.

export interface TimelineBar {
  run: string;
  repo: string;
  kind: Run['kind'];
  subject: string;
  title: string | null;
  /** success, failure, timeout, cancelled; `live` while it runs. */
  state: string;
  slot: number;
  start: number;
  end: number;
}

export interface Timeline {
  from: number;
  to: number;
  cap: number;
  /** Slots in use: at most the cap unless the cap was exceeded. */
  slots: number;
  bars: TimelineBar[];
}

export function layoutTimeline(runs: readonly Run[], window: { from: number; to: number; cap: number }): Timeline {
  const ends: number[] = [];
  const bars: TimelineBar[] = [];
  for (const run of [...runs].sort((a, b) => a.launchedAt - b.launchedAt || a.id.localeCompare(b.id))) {
    const start = run.launchedAt;
    const end = run.endedAt ?? window.to;
    if (end < window.from || start > window.to) continue;
    let slot = ends.findIndex((e) => e <= start);
    if (slot === -1) slot = ends.push(end) - 1;
    else ends[slot] = end;
    bars.push({
      run: run.id,
      repo: run.repo,
      kind: run.kind,
      subject: run.subject,
      title: run.title,
      state: run.status === 'live' ? 'live' : (run.outcome ?? 'ended'),
      slot,
      start,
      end,
    });
  }
  return { ...window, slots: ends.length, bars };
}
