import { sized } from './size.js';
import { Sandbox } from '../sandbox/sandbox.js';

// What each way runs reach yoke (YOKE_RUNS_REACH) costs in GitHub requests,
// counted at the embedded forge: yoke's requests (its app and installation
// credentials, never the runs') on a run's own paths, per completed run; and
// what an idle repository costs yoke per minute once the work is done.

type Print = (name: string, value: number, unit: string) => void;

/** The paths of one run's life: dispatch and follow it, its push token or runner, its result, its claim PR. */
const RUN_PATH =
  /\/actions\/(workflows\/[^/]+\/(dispatches|runs)|runs\/\d+(\/artifacts)?|artifacts\/)|\/git\/(ref|refs|blobs|trees|commits)\b|\/pulls$|\/access_tokens$|\/commits\/[^/]+$|^\/_artifacts\//;
const YOKE = new Set(['installation', 'app']);
/** Idle figures are taken at these cadences (the defaults are 60 s and 30 s: scale by them). */
const TICK_S = 2;
const REAPER_S = 2;
const IDLE_WINDOW_MS = sized(30_000, 2_000);

export async function benchRunsReach(print: Print): Promise<void> {
  for (const reach of ['api', 'github'] as const) {
    const s = new Sandbox({
      launcher: 'actions',
      failAgent: 0,
      issues: 2,
      runsReach: reach,
      tickSeconds: TICK_S,
      reaperSeconds: REAPER_S,
    });
    try {
      await s.start();
      await s.waitUntil(() => s.done(), 120_000, 'both issues to merge');
      const ended = (await s.runs()).filter((r) => r.status === 'ended').length;
      // yoke's requests; the artifact downloads it follows the redirect to carry no credential, and only yoke makes them.
      const mine = s.forge.http.stats.log.filter(
        (l) => (l.auth && YOKE.has(l.auth)) || l.path.startsWith('/_artifacts/'),
      );
      const onRuns = mine.filter((l) => RUN_PATH.test(l.path.replace(/^\/api\/v3/, '')));
      print(`requests_per_completed_run_${reach}`, onRuns.length / ended, `requests (${ended} runs: AFK, lander, fix)`);
      s.forge.http.resetStats();
      await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS));
      const idle = s.forge.http.stats.log.filter((l) => l.auth && YOKE.has(l.auth));
      const perMin = 60_000 / IDLE_WINDOW_MS;
      print(
        `idle_requests_per_repo_per_min_${reach}`,
        idle.length * perMin,
        `requests (tick ${TICK_S} s, reaper ${REAPER_S} s; one delivery repository)`,
      );
      print(
        `idle_rate_limited_requests_per_repo_per_min_${reach}`,
        idle.filter((l) => l.status !== 304).length * perMin,
        'requests (the rest are free 304s)',
      );
    } finally {
      await s.stop();
    }
  }
}
