import { existsSync, readFileSync } from 'node:fs';
import type { WorkflowRunRecord } from './actions-runner.js';
import type { ForgeDeployments } from './deployments.js';
import type { ForgeRepo, ForgeState, Issue } from './state.js';

// The embedded forge's web pages: plain HTML for what yoke links to (an issue
// or PR with its comments, labels, reviews and check runs; a workflow run
// with its log; a repository's issues), so a person can see what yoke did
// without curl. Read-only, and every value is escaped.

const esc = (s: unknown): string =>
  String(s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
const when = (ms: number | null) => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) : '');
const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title><style>body{font:14px system-ui,sans-serif;margin:24px;max-width:1000px}pre{white-space:pre-wrap;background:#f6f8fa;padding:8px}.label{background:#ddf4ff;border-radius:8px;padding:0 6px;margin-right:4px}article{border:1px solid #d0d7de;margin:8px 0;padding:8px}</style></head><body>${body}</body></html>`;

function issuePage(r: ForgeRepo, i: Issue): string {
  const kind = i.pull ? 'pull request' : 'issue';
  const labels = i.labels.map((l) => `<span class="label">${esc(l)}</span>`).join('');
  const comments = r.comments
    .filter((c) => c.issueNumber === i.number)
    .map(
      (c) =>
        `<article class="comment" id="comment-${c.id}"><b>${esc(c.user.login)}</b> commented ${when(c.createdAt)}${c.updatedAt > c.createdAt ? ' (edited)' : ''}<pre>${esc(c.body)}</pre></article>`,
    )
    .join('');
  let pull = '';
  if (i.pull) {
    const p = i.pull;
    const checks = r.checkRuns
      .filter((c) => c.headSha === p.headSha)
      .map(
        (c) =>
          `<li>${esc(c.name)}: ${esc(c.status)}${c.conclusion ? ` (${esc(c.conclusion)})` : ''}${c.title ? ` · ${esc(c.title)}` : ''}</li>`,
      )
      .join('');
    const reviews = r.reviews
      .filter((v) => v.pr === i.number)
      .map((v) => `<li>${esc(v.user.login)}: ${esc(v.state)} at <code>${esc(v.commitId.slice(0, 7))}</code></li>`)
      .join('');
    pull = `<p>${esc(p.headRef)} → ${esc(p.baseRef)} at <code>${esc(p.headSha.slice(0, 12))}</code>${p.merged ? ` · merged ${when(p.mergedAt)} as <code>${esc(p.mergeCommitSha?.slice(0, 12))}</code>` : ''}</p><h2>Check runs</h2><ul class="checks">${checks || '<li>none</li>'}</ul><h2>Reviews</h2><ul class="reviews">${reviews || '<li>none</li>'}</ul>`;
  }
  return page(
    `${i.title} · ${kind} #${i.number} · ${r.fullName}`,
    `<p><a href="/${esc(r.fullName)}/issues">${esc(r.fullName)}</a></p><h1>${esc(i.title)} <small>#${i.number}</small></h1><p class="state">${esc(i.state)}${i.stateReason ? ` (${esc(i.stateReason)})` : ''} · opened by ${esc(i.user.login)} · ${labels}</p><pre>${esc(i.body)}</pre>${pull}<h2>Comments</h2>${comments || '<p>none</p>'}`,
  );
}

function runPage(r: ForgeRepo, w: WorkflowRunRecord): string {
  const log = existsSync(w.logPath) ? readFileSync(w.logPath, 'utf8').slice(-200_000) : '';
  const jobs = Object.entries(w.jobs)
    .map(([name, result]) => `<li>${esc(name)}: ${esc(result)}</li>`)
    .join('');
  return page(
    `${w.displayTitle} · workflow run ${w.id} · ${r.fullName}`,
    `<p><a href="/${esc(r.fullName)}/issues">${esc(r.fullName)}</a></p><h1>${esc(w.displayTitle)} <small>run ${w.id}</small></h1><p class="state">${esc(w.workflow)} · ${esc(w.status)}${w.conclusion ? ` (${esc(w.conclusion)})` : ''} · by ${esc(w.actor.login)} · at <code>${esc(w.headSha.slice(0, 12))}</code></p><h2>Jobs</h2><ul>${jobs || '<li>none yet</li>'}</ul><h2>Log</h2><pre class="log">${esc(log) || 'no log yet'}</pre>`,
  );
}

function listPage(r: ForgeRepo): string {
  const rows = [...r.issues.values()]
    .sort((a, b) => b.number - a.number)
    .map(
      (i) =>
        `<tr><td><a href="/${esc(r.fullName)}/${i.pull ? 'pull' : 'issues'}/${i.number}">#${i.number}</a></td><td>${esc(i.title)}</td><td>${i.pull ? 'PR' : 'issue'}</td><td>${esc(i.state)}</td><td>${i.labels.map((l) => `<span class="label">${esc(l)}</span>`).join('')}</td></tr>`,
    )
    .join('');
  return page(`Issues · ${r.fullName}`, `<h1>${esc(r.fullName)}</h1><table>${rows}</table>`);
}

/** The repository's deployments by environment, newest first, each with its statuses, and the protection rules jobs waited at. */
function deploymentsPage(r: ForgeRepo, deployments: ForgeDeployments): string {
  const envs = [...deployments.environmentsOf(r).values()];
  const sections = envs
    .map((e) => {
      const rules = e.rules
        .filter((x) => x.enabled)
        .map((x) => esc(x.app.slug))
        .join(', ');
      const rows = deployments.deployments
        .filter((d) => d.repo === r.fullName && d.environment === e.name)
        .sort((a, b) => b.id - a.id)
        .map((d) => {
          const statuses = d.statuses
            .map(
              (s) =>
                `${esc(s.state)} by ${esc(s.creator.login)}${s.logUrl ? ` (<a href="${esc(s.logUrl)}">log</a>)` : ''}`,
            )
            .join(' ← ');
          const gate = deployments.gates.find((g) => g.deploymentId === d.id);
          const answers = gate
            ? gate.answers.map((a) => `${esc(a.app)} ${esc(a.state)}: ${esc(a.comment)}`).join('; ') ||
              `waiting for ${[...gate.pending].map(esc).join(', ')}`
            : '';
          return `<tr class="deployment" id="deployment-${d.id}"><td>${d.id}</td><td><code>${esc(d.sha.slice(0, 12))}</code> (${esc(d.ref)})</td><td>${esc(d.creator.login)}</td><td>${statuses || 'no status'}</td><td>${answers}</td></tr>`;
        })
        .join('');
      return `<h2 id="${esc(e.name)}">${esc(e.name)}</h2><p>Protection rules: ${rules || 'none'}</p><table><tr><th>id</th><th>commit</th><th>by</th><th>statuses, newest first</th><th>protection rule</th></tr>${rows}</table>`;
    })
    .join('');
  return page(
    `Deployments · ${r.fullName}`,
    `<p><a href="/${esc(r.fullName)}/issues">${esc(r.fullName)}</a></p><h1>Deployments</h1>${sections || '<p>none</p>'}`,
  );
}

/** The HTML page for a web path, or null when there is none. */
export function forgePage(
  state: ForgeState,
  runs: readonly WorkflowRunRecord[],
  pathname: string,
  deployments?: ForgeDeployments,
): string | null {
  // GitHub's environment pages are /OWNER/REPO/deployments/ENVIRONMENT; here one page shows every environment.
  const dep = /^\/([\w.-]+\/[\w.-]+)\/deployments(?:\/[\w. %-]+)?\/?$/.exec(pathname);
  const deploymentsOf = dep ? state.repos.get(dep[1]!) : undefined;
  if (deploymentsOf) return deployments ? deploymentsPage(deploymentsOf, deployments) : null;
  const m = /^\/([\w.-]+\/[\w.-]+)(?:\/(issues|pull|actions\/runs)(?:\/(\d+))?)?\/?$/.exec(pathname);
  if (!m) return null;
  const r = state.repos.get(m[1]!);
  if (!r) return null;
  if (!m[2] || (m[2] === 'issues' && !m[3])) return listPage(r);
  const n = Number(m[3]);
  if (m[2] === 'actions/runs') {
    const w = runs.find((x) => x.id === n && x.repo === r.fullName);
    return w ? runPage(r, w) : null;
  }
  const i = r.issues.get(n);
  // GitHub redirects between /issues/N and /pull/N; here either path shows it.
  return i ? issuePage(r, i) : null;
}
