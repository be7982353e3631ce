import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../sandbox/yoke-process.js';
import { parse } from 'yaml';

// SP17: a job that fetches yoke's runner while yoke restarts asks again. Each shipped workflow's own
// "Get yoke's runner" step runs in bash, as a runner runs it, against a loopback port that refuses and
// then listens; the same step with the template's first curl (no retry) fails there.

const TEMPLATES = ['templates/yoke-run.yml', ...readdirSync('templates/agents').map((f) => `templates/agents/${f}`)];
const STEP = "Get yoke's runner";
const RUNNER = 'export const runner = true;\n';

const dirs: string[] = [];
let server: Server | null = null;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Every "Get yoke's runner" step's script in a workflow file, by job. */
function runnerSteps(file: string): { job: string; script: string }[] {
  const wf = parse(readFileSync(file, 'utf8')) as {
    jobs: Record<string, { steps: { name?: string; run?: string }[] }>;
  };
  return Object.entries(wf.jobs).flatMap(([job, j]) =>
    j.steps.filter((s) => s.name === STEP).map((s) => ({ job, script: s.run! })),
  );
}

/** Runs a step's script as a runner does (`bash -e`), with the step's env; resolves its exit code and output. */
function runStep(script: string, apiUrl: string): Promise<{ code: number; out: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'yoke-runner-fetch-'));
  dirs.push(dir);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    API_URL: apiUrl,
    REACH: 'api',
    RUNNER_SHA256: createHash('sha256').update(RUNNER).digest('hex'),
    RUNNER_TEMP: dir,
    TOKEN: 'unused',
  };
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => resolve({ code: code ?? 1, out, dir }));
  });
}

/** Starts serving the runner at `port` after `ms`. */
function listenLater(port: number, ms: number): void {
  setTimeout(() => {
    server = createServer((req, res) => {
      if (req.url === '/yoke/runner.mjs') res.end(RUNNER);
      else res.writeHead(404).end();
    }).listen(port, '127.0.0.1');
  }, ms);
}

describe("SP17 the shipped workflows' runner fetch", () => {
  it('SP17 every job of every shipped workflow gets the runner from a yoke that starts listening only after the job asked', async () => {
    const steps = TEMPLATES.flatMap((file) => runnerSteps(file).map((s) => ({ file, ...s })));
    // agent, deliver, validate and report, in each of the three.
    expect(steps.map((s) => `${s.file}:${s.job}`)).toHaveLength(12);
    const port = await freePort();
    listenLater(port, 1_500);
    const results = await Promise.all(steps.map((s) => runStep(s.script, `http://127.0.0.1:${port}`)));
    expect(results.map((r, i) => `${steps[i]!.file}:${steps[i]!.job} ${r.code}`)).toEqual(
      steps.map((s) => `${s.file}:${s.job} 0`),
    );
    for (const r of results) expect(readFileSync(join(r.dir, 'yoke-runner.mjs'), 'utf8')).toBe(RUNNER);
  }, 30_000);

  it('SP17 the same step without the retry fails there (the test above can fail)', async () => {
    const [step] = runnerSteps('templates/yoke-run.yml');
    const once = step!.script.replace(/ --retry \d+ --retry-connrefused --retry-max-time \d+/, '');
    expect(once).not.toBe(step!.script);
    const port = await freePort();
    listenLater(port, 1_500);
    const r = await runStep(once, `http://127.0.0.1:${port}`);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('Failed to connect');
  }, 30_000);
});
