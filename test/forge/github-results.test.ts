import { createHash } from 'node:crypto';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { readZip, ZipError } from '../../src/forge/zip.js';
import { writeZip } from '../../sandbox/forge/zip-writer.js';
import { isolateNock } from '../helpers/nock.js';
import { API, nockForge, REPO } from '../helpers/github-forge.js';

// What runs that reach yoke through GitHub need of it, against GitHub's REST
// paths (nock, every mock used, no network): the runner published with the git
// data API, a run's result artifact listed and downloaded through GitHub's
// redirect, a claim branch moved (fast forward only) or removed, and the runs
// waiting at a protection rule.

isolateNock();

// git's id of the blob '// runner'.
const RUNNER_BLOB = createHash('sha1').update('blob 9\0// runner').digest('hex');
const SHA = 'a'.repeat(64);
const gh = () => nock(API, { reqheaders: { authorization: 'token ghs_inst' } });

/** GitHub takes the runner's blob, its tree and a parentless commit of it, as c1. */
function writesRunnerCommit(api: nock.Scope): void {
  api
    .post('/repos/acme/api/git/blobs', { content: Buffer.from('// runner').toString('base64'), encoding: 'base64' })
    .reply(201, { sha: 'b1' });
  api
    .post('/repos/acme/api/git/trees', {
      tree: [{ path: 'yoke-runner.mjs', mode: '100644', type: 'blob', sha: 'b1' }],
    })
    .reply(201, { sha: 't1' });
  api
    .post('/repos/acme/api/git/commits', { message: `yoke's runner, sha256 ${SHA}`, tree: 't1', parents: [] })
    .reply(201, { sha: 'c1' });
}

describe('GitHubForge, for runs that reach yoke through GitHub', () => {
  it('publishes the runner once: blob, tree, parentless commit and ref; a ref already there is left as it is', async () => {
    const api = gh();
    api.get(`/repos/acme/api/git/ref/yoke%2Frunner%2F${SHA}`).reply(404, { message: 'Not Found' });
    writesRunnerCommit(api);
    api.post('/repos/acme/api/git/refs', { ref: `refs/yoke/runner/${SHA}`, sha: 'c1' }).reply(201, {});
    // Then it is there, holding exactly the runner: left as it is.
    api
      .get(`/repos/acme/api/git/ref/yoke%2Frunner%2F${SHA}`)
      .reply(200, { ref: `refs/yoke/runner/${SHA}`, object: { sha: 'c1', type: 'commit' } });
    api.get('/repos/acme/api/commits/c1').reply(200, { sha: 'c1', commit: { tree: { sha: 't1' } } });
    api
      .get('/repos/acme/api/git/trees/t1')
      .reply(200, { sha: 't1', tree: [{ path: 'yoke-runner.mjs', sha: RUNNER_BLOB }] });
    expect(await nockForge().publishRunner(REPO, SHA, '// runner')).toBe('published');
    expect(await nockForge().publishRunner(REPO, SHA, '// runner')).toBe('present');
  });

  it('TR35 a runner ref a writer made first, holding something else, is taken back: yoke publishes its runner and moves the ref to it by force', async () => {
    const api = gh();
    api
      .get(`/repos/acme/api/git/ref/yoke%2Frunner%2F${SHA}`)
      .reply(200, { ref: `refs/yoke/runner/${SHA}`, object: { sha: 'evil', type: 'commit' } });
    api.get('/repos/acme/api/commits/evil').reply(200, { sha: 'evil', commit: { tree: { sha: 'tevil' } } });
    api
      .get('/repos/acme/api/git/trees/tevil')
      .reply(200, { sha: 'tevil', tree: [{ path: 'yoke-runner.mjs', sha: 'f'.repeat(40) }] });
    writesRunnerCommit(api);
    api.patch(`/repos/acme/api/git/refs/yoke%2Frunner%2F${SHA}`, { sha: 'c1', force: true }).reply(200, {});
    expect(await nockForge().publishRunner(REPO, SHA, '// runner')).toBe('published');
  });

  it("lists a run's artifacts and downloads one through GitHub's redirect, as the zip it is; a gone one is null", async () => {
    const zip = writeZip([{ name: 'result.json', data: Buffer.from('{"result":"{}","token":"t"}') }]);
    gh()
      .get('/repos/acme/api/actions/runs/42/artifacts')
      .query({ per_page: 100 })
      .reply(200, {
        total_count: 1,
        artifacts: [{ id: 5, name: 'yoke-result', size_in_bytes: zip.length, expired: false }],
      });
    gh()
      .get('/repos/acme/api/actions/artifacts/5/zip')
      .reply(302, '', { location: 'https://blobs.example.test/artifact-5?sig=x' });
    nock('https://blobs.example.test').get('/artifact-5').query({ sig: 'x' }).reply(200, zip, {
      'content-type': 'application/zip',
    });
    gh().get('/repos/acme/api/actions/artifacts/6/zip').reply(410, { message: 'Artifact has expired' });
    const forge = nockForge();
    expect(await forge.listRunArtifacts(REPO, 42)).toEqual([
      { id: 5, name: 'yoke-result', sizeInBytes: zip.length, expired: false },
    ]);
    const got = await forge.downloadArtifact(REPO, 5);
    expect(readZip(got!, 1024).get('result.json')!.toString()).toBe('{"result":"{}","token":"t"}');
    expect(await forge.downloadArtifact(REPO, 6)).toBeNull();
  });

  it("moves a branch only by a fast forward, GitHub's refusal coming back as data, and removes one", async () => {
    gh()
      .patch('/repos/acme/api/git/refs/heads%2Fyoke%2F1-r1', { sha: 'f'.repeat(40), force: false })
      .reply(200, {});
    gh()
      .patch('/repos/acme/api/git/refs/heads%2Fyoke%2F1-r1', { sha: 'e'.repeat(40), force: false })
      .reply(422, { message: 'Update is not a fast forward' });
    gh().delete('/repos/acme/api/git/refs/heads%2Fyoke%2Ffix-r2').reply(204);
    const forge = nockForge();
    expect(await forge.moveBranch(REPO, 'yoke/1-r1', 'f'.repeat(40))).toEqual({ ok: true });
    expect(await forge.moveBranch(REPO, 'yoke/1-r1', 'e'.repeat(40))).toEqual({
      ok: false,
      status: 422,
      message: 'Update is not a fast forward',
    });
    await forge.deleteBranch(REPO, 'yoke/fix-r2');
  });

  it('lists the runs waiting at a protection rule and the environments one waits on', async () => {
    gh()
      .get('/repos/acme/api/actions/runs')
      .query({ status: 'waiting', per_page: 100 })
      .reply(200, {
        total_count: 1,
        workflow_runs: [{ id: 77, status: 'waiting', head_sha: 'c'.repeat(40), updated_at: '2026-12-01T00:00:00Z' }],
      });
    gh()
      .get('/repos/acme/api/actions/runs/77/pending_deployments')
      .reply(200, [{ environment: { id: 1, name: 'production' }, wait_timer: 0, reviewers: [] }]);
    const forge = nockForge();
    const [run] = await forge.listWaitingRuns(REPO);
    expect([run!.id, run!.status, run!.headSha, run!.updatedAt]).toEqual([
      77,
      'waiting',
      'c'.repeat(40),
      Date.parse('2026-12-01T00:00:00Z'),
    ]);
    expect(await forge.listPendingDeployments(REPO, 77)).toEqual(['production']);
  });
});

describe('GitHubForge, for review-driven fixes', () => {
  it("reads a PR's reviews with their ids, texts and times, and its inline comments with path, line and diff hunk", async () => {
    gh()
      .get('/repos/acme/api/pulls/7/reviews')
      .query({ per_page: 100 })
      .reply(200, [
        {
          id: 31,
          user: { login: 'maint' },
          state: 'CHANGES_REQUESTED',
          commit_id: 'c'.repeat(40),
          body: 'Please rename it.',
          submitted_at: '2026-12-03T10:00:00Z',
        },
      ]);
    gh()
      .get('/repos/acme/api/pulls/7/comments')
      .query({ sort: 'created', direction: 'asc', per_page: 100 })
      .reply(200, [
        {
          id: 41,
          pull_request_review_id: 31,
          user: { login: 'maint' },
          path: 'lib/a.js',
          line: 3,
          diff_hunk: '@@ -0,0 +1,3 @@\n+a\n+b\n+c',
          body: 'This one.',
          commit_id: 'c'.repeat(40),
        },
      ]);
    const forge = nockForge();
    expect(await forge.listReviews(REPO, 7)).toEqual([
      {
        author: 'maint',
        state: 'CHANGES_REQUESTED',
        commitId: 'c'.repeat(40),
        id: 31,
        body: 'Please rename it.',
        submittedAt: Date.parse('2026-12-03T10:00:00Z'),
      },
    ]);
    expect(await forge.listReviewComments(REPO, 7)).toEqual([
      {
        id: 41,
        reviewId: 31,
        author: 'maint',
        path: 'lib/a.js',
        line: 3,
        diffHunk: '@@ -0,0 +1,3 @@\n+a\n+b\n+c',
        body: 'This one.',
        commitId: 'c'.repeat(40),
      },
    ]);
  });
});

describe('reading a zip archive', () => {
  it('reads deflated and stored entries, and refuses what is not a zip, is damaged or is larger than allowed', () => {
    const zip = writeZip([
      { name: 'a.txt', data: Buffer.from('hello') },
      { name: 'dir/b.json', data: Buffer.from('{}') },
    ]);
    const files = readZip(zip, 1024);
    expect([...files].map(([n, d]) => [n, d.toString()])).toEqual([
      ['a.txt', 'hello'],
      ['dir/b.json', '{}'],
    ]);
    expect(() => readZip(Buffer.from('not a zip at all, not even close to one'), 1024)).toThrow(
      new ZipError('not a zip archive (no end of central directory)'),
    );
    expect(() => readZip(writeZip([{ name: 'big', data: Buffer.alloc(2048) }]), 1024)).toThrow(
      new ZipError('the archive holds more than 1024 bytes'),
    );
    const damaged = Buffer.from(zip);
    damaged.writeUInt32LE(0, 0);
    expect(() => readZip(damaged, 1024)).toThrow(new ZipError('a.txt: its local header is damaged'));
  });

  it('TR32 refuses an archive that names a file twice, which readers that keep the first or the last would read apart', () => {
    const twice = writeZip([
      { name: 'result.json', data: Buffer.from('{"verdict":"reject"}') },
      { name: 'result.json', data: Buffer.from('{"verdict":"accept"}') },
    ]);
    expect(() => readZip(twice, 1024)).toThrow(new ZipError('result.json is in the archive twice'));
  });
});
