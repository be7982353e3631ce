import { patientFetch } from './patient-fetch.js';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { readRunFacts } from './facts.js';
import { collapsedOutput, tailOf } from './output.js';
import { BUNDLE_FILE, RESULT_FILE, readAgentResult, type RunnerIo } from './run.js';
import { readHandover } from './handover.js';
import { linkRefusal, linksAtProtectedPaths } from './settings-swap.js';
import { jobSecretValues, scanChange, secretRefusal } from './secret-scan.js';
import { claimBranch, fixBranch } from '../kernel/branches.js';
import { RESULT_ARTIFACT, RESULT_FILE_NAME, resultAudience, type HandedPush } from './result-document.js';
import { errorText } from '../kernel/error-text.js';
import { fieldOf, textField } from '../kernel/guards.js';

// `yoke agent deliver`: the deliver job of an AFK or fix run, which runs
// none of the agent's code. With the run's own credential (the job's OIDC
// token, or the command launcher's per-run secret) it asks yoke for a push
// token, pushes the agent's bundle to the one branch yoke names, has yoke
// open the claim PR (so the repository's own CI runs on it: pushes and PRs
// made with GITHUB_TOKEN start no workflows), and reports the result.
// `yoke agent verdict`: the lander's report job, the same way.

const PushGrant = z.object({ token: z.string().min(1), branch: z.string().min(1) });
const Claim = z.object({ number: z.number(), html_url: z.string().optional() });

type Fetch = typeof fetch;

export class YokeRefused extends Error {}

/** The run's credential: the per-run secret, else an OIDC token for yoke's URL from the job's runner. */
export async function runBearer(env: Record<string, string | undefined>, audience: string, f: Fetch): Promise<string> {
  if (env.YOKE_RUN_SECRET) return env.YOKE_RUN_SECRET;
  const url = env.ACTIONS_ID_TOKEN_REQUEST_URL;
  const token = env.ACTIONS_ID_TOKEN_REQUEST_TOKEN;
  if (!url || !token)
    throw new YokeRefused(
      'This job cannot get an OIDC token: give it `permissions: id-token: write` (or, under the command launcher, YOKE_RUN_SECRET).',
    );
  const res = await f(`${url}&audience=${encodeURIComponent(audience)}`, {
    headers: { authorization: `bearer ${token}` },
  });
  if (!res.ok) throw new YokeRefused(`The runner gave no OIDC token (${res.status}).`);
  return z.object({ value: z.string() }).parse(await res.json()).value;
}

async function callYoke<T>(
  f: Fetch,
  apiUrl: string,
  bearer: string,
  path: string,
  body: unknown,
  schema: z.ZodType<T>,
): Promise<T> {
  const res = await f(`${apiUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) {
    let said = text;
    try {
      const e = fieldOf(JSON.parse(text), 'error');
      const message = textField(e, 'message');
      const recovery = textField(e, 'recovery');
      if (message) said = `${message}${recovery ? ` ${recovery}` : ''}`;
    } catch {
      /* not yoke's JSON */
    }
    throw new YokeRefused(`yoke answered ${res.status} to ${path}: ${said.slice(0, 500)}`);
  }
  return schema.parse(text ? JSON.parse(text) : {});
}

/**
 * Runs that reach yoke through GitHub: the result's exact text and an OIDC
 * token whose audience carries that text's sha256, written where the job's
 * upload step hands it to yoke as the `yoke-result` artifact.
 */
async function handResult(io: RunnerIo, f: Fetch, audience: string, result: Record<string, unknown>): Promise<void> {
  const dir = io.env.YOKE_RESULT_DIR;
  if (!dir)
    throw new YokeRefused('YOKE_RESULT_DIR is not set: the workflow names the folder its upload step hands to yoke');
  // TR35: the artifact's name is chosen now, at random, so nothing that ran before in this workflow run can take it first.
  if (io.env.GITHUB_OUTPUT)
    appendFileSync(io.env.GITHUB_OUTPUT, `artifact=${RESULT_ARTIFACT}-${randomBytes(16).toString('hex')}\n`);
  const text = JSON.stringify(result);
  const token = await runBearer(io.env, resultAudience(audience, text), f);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, RESULT_FILE_NAME), JSON.stringify({ result: text, token }), { mode: 0o600 });
}

function git(cwd: string, args: string[], token?: string): string {
  const auth = token
    ? ['-c', `http.extraHeader=Authorization: basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`]
    : [];
  const r = spawnSync('git', [...auth, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, GIT_TERMINAL_PROMPT: '0' },
  });
  if (r.status !== 0)
    throw new YokeRefused(`git ${args[0]} failed: ${(r.stderr || r.stdout).trim().replaceAll(token ?? '\0', '***')}`);
  return r.stdout.trim();
}

const SHA = /^[0-9a-f]{40}$/;

/**
 * Pushes the bundle's commit to the granted branch, in a fresh repository of its own (no hook, fsmonitor or
 * config the agent planted is there): fetches its base by id, verifies and fetches the bundle, refuses a change
 * that holds a secret (TR16), then pushes.
 */
function pushBundle(
  bundle: string,
  remote: string,
  grant: z.infer<typeof PushGrant>,
  base: string,
  commit: string,
  secrets: readonly string[],
): void {
  const dir = mkdtempSync(join(tmpdir(), 'yoke-deliver-'));
  try {
    git(dir, ['init', '--quiet']);
    git(dir, ['fetch', '--quiet', '--depth=1', '--', remote, base], grant.token);
    git(dir, ['bundle', 'verify', '--quiet', bundle]);
    git(dir, ['fetch', '--quiet', '--', bundle, 'HEAD:refs/yoke/work']);
    const got = git(dir, ['rev-parse', '--verify', 'refs/yoke/work^{commit}']);
    if (got !== commit)
      throw new YokeRefused(`the bundle holds ${got.slice(0, 7)}, not the agent's ${commit.slice(0, 7)}`);
    const found = scanChange(dir, base, commit, secrets);
    if (found.length) throw new YokeRefused(secretRefusal(found));
    const links = linksAtProtectedPaths(dir, base, commit);
    if (links.length) throw new YokeRefused(linkRefusal(links));
    git(dir, ['push', '--quiet', '--', remote, `refs/yoke/work:refs/heads/${grant.branch}`], grant.token);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * TR17: a push token is revoked as soon as its push is done (`DELETE /installation/token`), so a copy of it
 * taken from this job is worth nothing. Installation tokens reach every branch and tag otherwise, for an hour.
 */
async function revokePushToken(
  f: Fetch,
  apiUrl: string | undefined,
  token: string,
  out: (l: string) => void,
): Promise<void> {
  if (!apiUrl) {
    out('GITHUB_API_URL is not set, so the push token was not revoked; it lapses within the hour.');
    return;
  }
  const res = await f(`${apiUrl.replace(/\/+$/, '')}/installation/token`, {
    method: 'DELETE',
    headers: { authorization: `token ${token}`, accept: 'application/vnd.github+json' },
  }).catch(() => null);
  out(
    res?.status === 204
      ? 'revoked the push token'
      : `could not revoke the push token (${res ? res.status : 'no answer'}); it lapses within the hour`,
  );
}

/** TR17: what the agent job handed over is checked before anything is pushed: both commits are ids, and the base is the head yoke dispatched. */
export function checkHandover(
  result: { base?: string | undefined; commit?: string | undefined },
  dispatched: string | null,
): string | null {
  if (!result.base || !SHA.test(result.base)) return `result.json's base is not a 40-hex commit id`;
  if (!result.commit || !SHA.test(result.commit)) return `result.json's commit is not a 40-hex commit id`;
  if (dispatched && result.base !== dispatched)
    return `result.json's base ${result.base.slice(0, 7)} is not the commit yoke dispatched the run on (${dispatched.slice(0, 7)})`;
  return null;
}

export async function agentDeliver(io: RunnerIo): Promise<number> {
  // SP17: yoke restarted while the run delivers: its calls wait for it, never reached ones sent again.
  const f = patientFetch(io.fetch ?? fetch, io.sleep);
  const facts = readRunFacts(io.env);
  if (!facts.ok) {
    io.out(`The runner cannot deliver: ${facts.error}.`);
    return 2;
  }
  const { runId, apiUrl, repo, kind, reach } = facts.facts;
  const out = io.env.YOKE_OUT ?? '';
  let bearer = '';
  if (reach === 'api') {
    try {
      bearer = await runBearer(io.env, apiUrl, f);
    } catch (err) {
      io.out(errorText(err));
      return 1;
    }
  }
  /** What was pushed, for yoke to take on from (reaching through GitHub, yoke opens the claim PR or moves the claim branch). */
  let pushed: HandedPush | undefined;
  const report = async (body: { outcome: 'success' | 'failure'; summary: string; cost?: unknown }) => {
    if (reach === 'github')
      await handResult(io, f, apiUrl, {
        run_id: runId,
        ...body,
        ...(pushed && body.outcome === 'success' ? { push: pushed } : {}),
      });
    else await callYoke(f, apiUrl, bearer, `/yoke/api/runs/${runId}/result`, body, z.unknown());
    io.out(`${reach === 'github' ? 'handed back' : 'reported'} ${body.outcome} for ${runId}`);
  };
  // TR21: on Actions the agent job hands over through job outputs, never an artifact.
  readHandover(io.env, out, RESULT_FILE, BUNDLE_FILE);
  const result = readAgentResult(out);
  try {
    if ('error' in result) {
      const ended = io.env.AGENT_RESULT ? ` (the agent job ended ${io.env.AGENT_RESULT})` : '';
      await report({
        outcome: 'failure',
        summary: `The agent job left no result${ended}: ${result.error === 'missing' ? 'see its log' : result.error}.`,
      });
      return 1;
    }
    const cost =
      result.cost && result.cost.usd !== null
        ? { usd: result.cost.usd, input_tokens: result.cost.input_tokens, output_tokens: result.cost.output_tokens }
        : undefined;
    if (result.outcome === 'failure') {
      await report({ outcome: 'failure', summary: result.summary, ...(cost ? { cost } : {}) });
      return 1;
    }
    const bundle = join(out, BUNDLE_FILE);
    if (!existsSync(bundle)) throw new YokeRefused('the agent job reported success but left no bundle');
    const bad = checkHandover(result, facts.facts.headSha ?? io.env.GITHUB_SHA ?? null);
    if (bad) throw new YokeRefused(bad);
    const server = (io.env.GITHUB_SERVER_URL ?? 'https://github.com').replace(/\/+$/, '');
    let summary = result.summary;
    if (reach === 'github') {
      // The job's own token (`contents: write`), to the one branch yoke's runner names; yoke takes it on from there.
      const token = io.env.GITHUB_TOKEN;
      if (!token) throw new YokeRefused("GITHUB_TOKEN is not set: the deliver job pushes with the job's own token");
      const branch = kind === 'fix' ? fixBranch(runId) : claimBranch(facts.facts.issueNumber!, runId);
      pushBundle(bundle, `${server}/${repo}.git`, { token, branch }, result.base!, result.commit!, [
        ...jobSecretValues(io.env),
        token,
      ]);
      io.out(`pushed ${result.commit!.slice(0, 7)} to ${branch}`);
      pushed = {
        branch,
        commit: result.commit!,
        base: result.base!,
        ...(kind !== 'fix' ? { title: result.title ?? `yoke: ${facts.facts.issueNumber}` } : {}),
      };
    } else {
      const grant = await callYoke(f, apiUrl, bearer, `/yoke/api/runs/${runId}/push`, {}, PushGrant);
      try {
        pushBundle(bundle, `${server}/${repo}.git`, grant, result.base!, result.commit!, [
          ...jobSecretValues(io.env),
          grant.token,
        ]);
        io.out(`pushed ${result.commit!.slice(0, 7)} to ${grant.branch}`);
      } finally {
        // Whether or not the push went through, the token is done with.
        await revokePushToken(f, io.env.GITHUB_API_URL, grant.token, io.out);
      }
      if (kind !== 'fix') {
        const pr = await callYoke(
          f,
          apiUrl,
          bearer,
          `/yoke/api/runs/${runId}/claim`,
          { title: result.title ?? `yoke: ${facts.facts.issueNumber}`, summary: result.summary },
          Claim,
        );
        io.out(`yoke opened claim PR #${pr.number}`);
        summary = `Opened #${pr.number}. ${summary}`;
      }
    }
    await report({ outcome: 'success', summary, ...(cost ? { cost } : {}) });
    return 0;
  } catch (err) {
    const why = errorText(err);
    io.out(why);
    try {
      await report({ outcome: 'failure', summary: `Delivery failed: ${why}` });
    } catch (again) {
      io.out(`and the failure could not be reported: ${errorText(again)}`);
    }
    return 1;
  }
}

/** `yoke agent verdict`: the lander's report job; the verdict is the validation job's result, never the PR's word. */
export async function landerVerdict(io: RunnerIo): Promise<number> {
  const f = io.fetch ?? fetch;
  const runId = io.env.YOKE_RUN_ID;
  const apiUrl = io.env.YOKE_API_URL?.replace(/\/+$/, '');
  const validation = io.env.VALIDATION;
  if (!runId || !apiUrl || !validation) {
    io.out('YOKE_RUN_ID, YOKE_API_URL and VALIDATION (needs.validate.result) must be set for the lander report.');
    return 2;
  }
  const head = (io.env.YOKE_HEAD_SHA ?? '').slice(0, 7);
  let tail = '';
  try {
    tail = tailOf(Buffer.from(io.env.VALIDATION_TAIL ?? '', 'base64').toString('utf8'));
  } catch {
    tail = '';
  }
  const output = tail ? `\n\n${collapsedOutput('The end of the validation output', tail)}` : '';
  const body =
    validation === 'success' || validation === 'failure'
      ? {
          outcome: 'success',
          verdict: validation === 'success' ? 'accept' : 'reject',
          head_sha: io.env.YOKE_HEAD_SHA ?? '',
          summary: `The validation job ${validation === 'success' ? 'passed' : 'failed'} at \`${head}\`.${output}`,
        }
      : { outcome: 'failure', summary: `The validation job ended ${validation}.${output}` };
  try {
    if (io.env.YOKE_REACH === 'github') {
      await handResult(io, f, apiUrl, { run_id: runId, ...body });
      io.out(`handed back ${'verdict' in body ? body.verdict : body.outcome} for ${runId}`);
      return 0;
    }
    const bearer = await runBearer(io.env, apiUrl, f);
    await callYoke(f, apiUrl, bearer, `/yoke/api/runs/${runId}/result`, body, z.unknown());
    io.out(`reported ${'verdict' in body ? body.verdict : body.outcome} for ${runId}`);
    return 0;
  } catch (err) {
    io.out(errorText(err));
    return 1;
  }
}
