import type { FleetReport } from '../fleet/report.js';

const esc = (s: unknown): string =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const time = (ms: number | null): string => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) : '');

/** The read-only dashboard: one server-rendered page of the fleet report. */
export function renderDashboard(r: FleetReport): string {
  const repos = r.repos
    .map(
      (repo) => `<tr class="${repo.paused ? 'paused' : repo.disabledReason ? 'disabled' : ''}">
  <td>${esc(repo.repo)}</td><td>${repo.cap}</td><td>${repo.autoLoop === null ? 'default' : repo.autoLoop ? 'on' : 'off'}</td>
  <td>${repo.consecutiveFailures}</td><td>${repo.paused ? 'paused' : repo.disabledReason ? `disabled: ${esc(repo.disabledReason)}` : 'ok'}</td>
  <td>${repo.live.map((l) => `${esc(l.kind)} ${esc(l.subject)}`).join('<br>')}</td><td>${esc(repo.recovery ?? '')}</td></tr>`,
    )
    .join('\n');
  const runs = r.recentRuns
    .map(
      (run) => `<tr><td><code>${esc(run.id)}</code></td><td>${esc(run.repo)}</td><td>${esc(run.kind)}</td><td>${esc(run.subject)}</td>
  <td>${esc(run.status)}</td><td>${esc(run.outcome ?? '')}${run.verdict ? ` (${esc(run.verdict)})` : ''}</td><td>${time(run.launchedAt)}</td><td>${time(run.endedAt)}</td><td>${esc(run.outcomeReason ?? '')}</td></tr>`,
    )
    .join('\n');
  // QA23: every active deployment run's waits with their commands; a flagged wait is one nobody is minding.
  const deliveries = r.deliveries
    .map(
      (d) => `<tr><td><code>${esc(d.id)}</code></td><td>${esc(d.repo)}</td><td>${esc(d.stage ?? '')}</td><td>${d.driver ? `${esc(d.driver.id)}${d.driver.live ? '' : ' (lease lapsed)'}` : 'none'}</td>
  <td>${d.waits.map((w) => `${esc(w.detail)} · notice ${esc(w.notice)}<br><code>${esc(w.command)}</code>`).join('<br>')}</td>
  <td class="flag">${d.flags.map((f) => `${esc(f.message)}<br>${esc(f.recovery)}`).join('<br>')}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>yoke fleet</title>
<meta http-equiv="refresh" content="15">
<style>
body{font:14px system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse;margin-bottom:2rem}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left;vertical-align:top}
tr.paused td{background:#fff1f0}td.flag{color:#a00}tr.disabled td{background:#fffbe6}
</style></head><body>
<h1>yoke fleet</h1>
<form method="post" action="/yoke/session/end"><button>Sign out</button></form>
<p>${r.liveCount} live run(s); global cap ${r.globalCap}; as of ${esc(r.generatedAt)}</p>
<h2>Repositories</h2>
<table><tr><th>repo</th><th>cap</th><th>auto loop</th><th>failures</th><th>state</th><th>live</th><th>to recover</th></tr>
${repos || '<tr><td colspan="7">No repository has been seen yet.</td></tr>'}</table>
<h2>Deployment runs</h2>
<table><tr><th>run</th><th>repo</th><th>stage</th><th>driver</th><th>waiting on</th><th>unattended</th></tr>
${deliveries || '<tr><td colspan="6">No deployment run is active.</td></tr>'}</table>
<h2>Recent runs</h2>
<table><tr><th>run</th><th>repo</th><th>kind</th><th>subject</th><th>status</th><th>outcome</th><th>launched</th><th>ended</th><th>reason</th></tr>
${runs || '<tr><td colspan="9">No runs yet.</td></tr>'}</table>
</body></html>`;
}

/** The sign-in form: the operator token goes in a POST body, never in the URL. */
export function renderSignIn(problem: string | null): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>yoke: sign in</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem;color:#222}input{width:28rem}.problem{color:#a00}</style></head><body>
<h1>yoke</h1>
${problem ? `<p class="problem">${esc(problem)}</p>` : ''}
<form method="post" action="/yoke/session">
<label>Operator token (one of YOKE_API_TOKENS)<br><input type="password" name="token" autocomplete="current-password" required></label>
<button>Sign in</button>
</form>
</body></html>`;
}
