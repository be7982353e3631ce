import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readZip } from '../../src/forge/zip.js';
import { EmbeddedForge } from '../../sandbox/forge-server.js';
import type { ForgeRepo } from '../../sandbox/forge/state.js';

// What the embedded forge serves for runs that reach yoke through GitHub, on
// its own and with GitHub's refusals: the git data API's blobs, trees,
// commits and refs; a workflow run's artifacts, listed and downloaded through
// a short-lived signed redirect, uploaded once per name, gone after 90 days;
// and the runs waiting at a protection rule, with what each waits on.

const key = generateKeyPairSync('rsa', { modulusLength: 2048 });
const dir = mkdtempSync(join(tmpdir(), 'yoke-forge-results-'));
let now = Date.now();
const WORKFLOW = [
  'name: result',
  'on:',
  '  workflow_dispatch:',
  '    inputs:',
  '      environment: { required: false, type: string, default: "" }',
  'permissions: {}',
  'jobs:',
  '  report:',
  '    runs-on: ubuntu-latest',
  '    steps:',
  '      - run: mkdir -p "$RUNNER_TEMP/out" && echo \'{"ok":true}\' > "$RUNNER_TEMP/out/result.json"',
  '      - uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02',
  '        with: { name: yoke-result, path: "${{ runner.temp }}/out/" }',
  '      - name: A second upload of the same name fails, as upload-artifact v4 does',
  '        uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02',
  '        continue-on-error: true',
  '        with: { name: yoke-result, path: "${{ runner.temp }}/out/" }',
  '',
].join('\n');
const GATED = [
  'name: gated',
  'on: { workflow_dispatch: {} }',
  'permissions: {}',
  'jobs:',
  '  deploy:',
  '    runs-on: ubuntu-latest',
  '    environment: production',
  '    steps:',
  '      - run: echo deployed',
  '',
].join('\n');

let forge: EmbeddedForge;
let repo: ForgeRepo;
let api = '';
let app = '';

const call = (token: string, method: string, path: string, body?: unknown, init: RequestInit = {}) =>
  fetch(`${api}${path}`, {
    method,
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    ...init,
  });
const until = async (cond: () => boolean, what: string) => {
  for (const end = Date.now() + 15_000; !cond();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};
const message = async (res: Response) => [res.status, ((await res.json()) as { message: string }).message];

beforeAll(async () => {
  forge = new EmbeddedForge({
    dataDir: dir,
    appId: 7,
    appSlug: 'yoke-test',
    appPublicKey: key.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    now: () => now,
  });
  await forge.start();
  api = `${forge.url}/api/v3`;
  repo = forge.createRepo('acme/app', {
    files: { '.github/workflows/result.yml': WORKFLOW, '.github/workflows/gated.yml': GATED },
    installationId: 3,
    collaborators: { dev: 'write', onlooker: 'read' },
  });
  forge.deployments.setEnvironment(repo, 'production', [{ id: 7, slug: 'yoke-test' }]);
  app = forge.state.installationToken(3).token;
});

afterAll(async () => {
  forge.runner.stopAll();
  await forge.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("the embedded forge's git data API", () => {
  it('makes a blob, a tree of it, a parentless commit and a ref outside heads; refuses what GitHub refuses', async () => {
    const blob = (await (
      await call(app, 'POST', '/repos/acme/app/git/blobs', { content: 'hello', encoding: 'utf-8' })
    ).json()) as { sha: string };
    const tree = (await (
      await call(app, 'POST', '/repos/acme/app/git/trees', {
        tree: [{ path: 'f.txt', mode: '100644', type: 'blob', sha: blob.sha }],
      })
    ).json()) as { sha: string };
    const commit = (await (
      await call(app, 'POST', '/repos/acme/app/git/commits', { message: 'm', tree: tree.sha, parents: [] })
    ).json()) as { sha: string };
    expect(
      (await call(app, 'POST', '/repos/acme/app/git/refs', { ref: 'refs/yoke/runner/x', sha: commit.sha })).status,
    ).toBe(201);
    expect((await call(app, 'GET', '/repos/acme/app/git/ref/yoke%2Frunner%2Fx')).status).toBe(200);
    expect(
      await message(
        await call(app, 'POST', '/repos/acme/app/git/refs', { ref: 'refs/yoke/runner/x', sha: commit.sha }),
      ),
    ).toEqual([422, 'Reference already exists']);
    expect(
      await message(await call(app, 'POST', '/repos/acme/app/git/refs', { ref: 'refs/x', sha: commit.sha })),
    ).toEqual([422, 'Reference name is not valid']);
    expect(
      await message(
        await call(app, 'POST', '/repos/acme/app/git/trees', {
          tree: [{ path: 'f.txt', mode: '100644', type: 'blob', sha: commit.sha }],
        }),
      ),
    ).toEqual([422, `tree.sha ${commit.sha} is not a valid blob`]);
    expect(
      await message(
        await call(app, 'POST', '/repos/acme/app/git/commits', { message: 'm', tree: tree.sha, parents: [blob.sha] }),
      ),
    ).toEqual([422, 'Parent SHA does not exist or is not a commit object']);
    expect((await call(app, 'GET', '/repos/acme/app/git/ref/yoke%2Fnothing')).status).toBe(404);
    // A reader writes nothing; the default branch is never deleted.
    expect(
      (await call(forge.personalToken('onlooker'), 'POST', '/repos/acme/app/git/blobs', { content: 'x' })).status,
    ).toBe(403);
    expect(await message(await call(app, 'DELETE', '/repos/acme/app/git/refs/heads%2Fmain'))).toEqual([
      422,
      'Cannot delete the default branch',
    ]);
  });
});

describe("the embedded forge's artifacts", () => {
  it('keeps one artifact of a name per run, lists it, downloads it through a signed redirect, and refuses what GitHub refuses', async () => {
    const before = forge.runner.runs.length;
    expect(
      (
        await call(forge.personalToken('dev'), 'POST', '/repos/acme/app/actions/workflows/result.yml/dispatches', {
          ref: 'main',
        })
      ).status,
    ).toBe(204);
    const run = forge.runner.runs[before]!;
    await until(() => run.status === 'completed', 'the run');
    // The second upload failed (its step continues on error): the first stands.
    expect([run.conclusion, Object.keys(run.artifacts)]).toEqual(['success', ['yoke-result']]);
    const res = await call(app, 'GET', `/repos/acme/app/actions/runs/${run.id}/artifacts`);
    const listed = (await res.json()) as {
      artifacts: { id: number; name: string; expired: boolean }[];
    };
    expect(listed.artifacts.map((a) => [a.name, a.expired])).toEqual([['yoke-result', false]]);
    const id = listed.artifacts[0]!.id;
    const redirect = await call(app, 'GET', `/repos/acme/app/actions/artifacts/${id}/zip`, undefined, {
      redirect: 'manual',
    });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    const zip = await fetch(location);
    expect(
      readZip(new Uint8Array(await zip.arrayBuffer()), 1024)
        .get('result.json')!
        .toString(),
    ).toBe('{"ok":true}\n');
    // The signed link is good for its holder only as signed, and only for a minute.
    // Flip the signature's first character, whatever it is (a fixed '0' left it unchanged one time in 16).
    const tampered = location.replace(/sig=(\w)/, (_, c: string) => `sig=${c === '0' ? '1' : '0'}`);
    expect(tampered).not.toBe(location);
    expect((await fetch(tampered)).status).toBe(404);
    now += 61_000;
    expect((await fetch(location)).status).toBe(404);
    expect((await call(app, 'GET', `/repos/acme/app/actions/artifacts/${id}/tar`)).status).toBe(404);
    // An installation not granted `actions` reads no artifact.
    forge.grants.set(3, { permissions: { contents: 'write' }, events: [] });
    expect((await call(app, 'GET', `/repos/acme/app/actions/runs/${run.id}/artifacts`)).status).toBe(403);
    forge.grants.delete(3);
    // After 90 days it is expired: listed so, and its download gone.
    now += 91 * 86_400_000;
    app = forge.state.installationToken(3).token;
    const old = (await (await call(app, 'GET', `/repos/acme/app/actions/runs/${run.id}/artifacts`)).json()) as {
      artifacts: { expired: boolean }[];
    };
    expect(old.artifacts.map((a) => a.expired)).toEqual([true]);
    expect(await message(await call(app, 'GET', `/repos/acme/app/actions/artifacts/${id}/zip`))).toEqual([
      410,
      'Artifact has expired',
    ]);
  });
});

describe("the embedded forge's waiting runs", () => {
  it('lists a run waiting at a protection rule with status=waiting, and the environment it waits on, until it is answered', async () => {
    now = Date.now();
    const before = forge.runner.runs.length;
    await call(forge.personalToken('dev'), 'POST', '/repos/acme/app/actions/workflows/gated.yml/dispatches', {
      ref: 'main',
    });
    const run = forge.runner.runs[before]!;
    await until(() => run.status === 'waiting', 'the run to wait');
    const waiting = (await (await call(app, 'GET', '/repos/acme/app/actions/runs?status=waiting')).json()) as {
      workflow_runs: { id: number; status: string }[];
    };
    expect(waiting.workflow_runs.map((w) => [w.id, w.status])).toEqual([[run.id, 'waiting']]);
    const pending = (await (
      await call(app, 'GET', `/repos/acme/app/actions/runs/${run.id}/pending_deployments`)
    ).json()) as {
      environment: { name: string };
    }[];
    expect(pending.map((p) => p.environment.name)).toEqual(['production']);
    forge.deployments.answer(repo, run.id, 'production', 'yoke-test', 'approved', 'ok');
    await until(() => run.status === 'completed', 'the run to finish');
    expect(
      (
        (await (await call(app, 'GET', '/repos/acme/app/actions/runs?status=waiting')).json()) as {
          workflow_runs: unknown[];
        }
      ).workflow_runs,
    ).toEqual([]);
  });
});
