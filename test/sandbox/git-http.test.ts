import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedForge } from '../../sandbox/forge-server.js';
import { revParse } from '../../sandbox/git.js';

// The embedded forge's git over HTTP, as github.com serves it: a token as
// the Basic password, and GitHub's refusals. A run's push token (one
// repository, contents: write) pushes; a read-only job token, a token for
// another repository or none at all does not.

const dir = mkdtempSync(join(tmpdir(), 'yoke-git-http-'));
let forge: EmbeddedForge;
const key = generateKeyPairSync('rsa', { modulusLength: 2048 });
beforeAll(async () => {
  forge = new EmbeddedForge({
    dataDir: join(dir, 'forge'),
    appId: 1,
    appSlug: 'yoke-test',
    appPublicKey: key.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  });
  await forge.start();
  forge.createRepo('acme/api', { files: { 'README.md': '# api\n' }, installationId: 1 });
  forge.createRepo('acme/other', { files: { 'README.md': '# other\n' }, installationId: 1 });
});
afterAll(async () => {
  await forge.stop();
  rmSync(dir, { recursive: true, force: true });
});

// Asynchronously: the forge answers from this same process.
const git = (cwd: string, args: string[], token?: string): Promise<{ code: number | null; err: string }> => {
  const auth = token
    ? ['-c', `http.extraHeader=Authorization: basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`]
    : [];
  return new Promise((resolve) => {
    const child = spawn('git', [...auth, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, GIT_TERMINAL_PROMPT: '0' },
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('close', (code) => resolve({ code, err }));
  });
};

async function tokenFor(body: Record<string, unknown>): Promise<string> {
  const state = (forge as unknown as { state: { installationToken(id: number, scope?: unknown): { token: string } } })
    .state;
  return state.installationToken(
    1,
    body.repositories
      ? {
          repos: body.repositories as string[],
          permissions: { metadata: 'read', ...(body.permissions as Record<string, string>) },
        }
      : undefined,
  ).token;
}

describe('git over HTTP', () => {
  it("TR22 an app's push token, like GitHub's, may not push a change to .github/workflows (the app has no workflows permission); a writer may", async () => {
    const token = await tokenFor({ repositories: ['api'], permissions: { contents: 'write' } });
    const work = mkdtempSync(join(dir, 'wf-'));
    expect((await git(work, ['clone', '-q', `${forge.url}/acme/api.git`, '.'], token)).code).toBe(0);
    spawnSync('mkdir', ['-p', join(work, '.github/workflows')]);
    writeFileSync(join(work, '.github/workflows/yoke-run.yml'), 'permissions: write-all\n');
    await git(work, ['add', '-A']);
    await git(work, ['commit', '-qm', 'widen']);
    const refused = await git(work, ['push', '-q', 'origin', 'HEAD:refs/heads/yoke/9-r9'], token);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain(
      'refusing to allow a GitHub App to create or update workflow `.github/workflows/yoke-run.yml` without `workflows` permission',
    );
    expect(revParse(forge.repos.get('acme/api')!.gitDir, 'refs/heads/yoke/9-r9')).toBeNull();
    // A change elsewhere still goes, and a person with write access may push the workflow.
    forge.repos.get('acme/api')!.collaborators.maint = 'write';
    expect(
      (await git(work, ['push', '-q', 'origin', 'HEAD:refs/heads/maint-wf'], forge.personalToken('maint'))).code,
    ).toBe(0);
  }, 60_000);

  it("TR03 with the default branch protected (a ruleset, as the README recommends), a run's push token cannot reach it: only its own branch takes the push, and GitHub says the branch is protected", async () => {
    const token = await tokenFor({ repositories: ['api'], permissions: { contents: 'write' } });
    const repo = forge.repos.get('acme/api')!;
    repo.protectedBranches.add('main');
    try {
      const work = mkdtempSync(join(dir, 'main-'));
      expect((await git(work, ['clone', '-q', `${forge.url}/acme/api.git`, '.'], token)).code).toBe(0);
      writeFileSync(join(work, 'README.md'), '# taken over\n');
      await git(work, ['commit', '-qam', 'straight to main']);
      const before = revParse(repo.gitDir, 'refs/heads/main');
      const refused = await git(work, ['push', '-q', 'origin', 'HEAD:refs/heads/main'], token);
      expect(refused.code).not.toBe(0);
      expect(refused.err).toContain('GH013: Repository rule violations found for refs/heads/main.');
      expect(revParse(repo.gitDir, 'refs/heads/main')).toBe(before);
      expect((await git(work, ['push', '-q', 'origin', 'HEAD:refs/heads/yoke/4-r4'], token)).code).toBe(0);
      const branch = async (name: string) =>
        (await (
          await fetch(`${forge.url}/api/v3/repos/acme/api/branches/${encodeURIComponent(name)}`, {
            headers: { authorization: `token ${token}` },
          })
        ).json()) as { protected: boolean };
      expect([(await branch('main')).protected, (await branch('yoke/4-r4')).protected]).toEqual([true, false]);
    } finally {
      repo.protectedBranches.delete('main');
    }
  }, 60_000);

  it("a run's push token clones and pushes a large pack to the branch it names", async () => {
    const token = await tokenFor({ repositories: ['api'], permissions: { contents: 'write' } });
    const work = mkdtempSync(join(dir, 'work-'));
    expect((await git(work, ['clone', '-q', `${forge.url}/acme/api.git`, '.'], token)).code).toBe(0);
    // Forty commits of random data: a pack of about 800 KB.
    for (let i = 0; i < 40; i++) {
      writeFileSync(join(work, `f${i}.bin`), randomBytes(20_000).toString('hex'));
      await git(work, ['add', '-A']);
      await git(work, ['commit', '-qm', `c${i}`]);
    }
    const pushed = await git(work, ['push', '-q', 'origin', 'HEAD:refs/heads/yoke/1-r1'], token);
    expect(pushed).toEqual({ code: 0, err: '' });
    const repo = forge.repos.get('acme/api')!;
    expect(revParse(repo.gitDir, 'refs/heads/yoke/1-r1')).toBe(
      spawnSync('git', ['rev-parse', 'HEAD'], { cwd: work, encoding: 'utf8' }).stdout.trim(),
    );
  }, 60_000);

  it('refuses a push without a token, with a read-only workflow token, with a token of another repository, and reads need a token', async () => {
    const work = mkdtempSync(join(dir, 'work-'));
    const ok = await tokenFor({ repositories: ['api'], permissions: { contents: 'write' } });
    expect((await git(work, ['clone', '-q', `${forge.url}/acme/api.git`, '.'], ok)).code).toBe(0);
    writeFileSync(join(work, 'x.txt'), 'x\n');
    await git(work, ['add', '-A']);
    await git(work, ['commit', '-qm', 'x']);
    const state = (forge as unknown as { state: { workflowToken(repo: string, write: boolean): string } }).state;
    const refusals: [string | undefined, RegExp][] = [
      [undefined, /Authentication failed|could not read Username|401/],
      [state.workflowToken('acme/api', false), /Permission to acme\/api.git denied|403/],
      [state.workflowToken('acme/other', true), /Permission to acme\/api.git denied|403/],
      [
        await tokenFor({ repositories: ['other'], permissions: { contents: 'write' } }),
        /Permission to acme\/api.git denied|403/,
      ],
      [
        await tokenFor({ repositories: ['api'], permissions: { contents: 'read' } }),
        /Permission to acme\/api.git denied|403/,
      ],
    ];
    for (const [token, why] of refusals) {
      const r = await git(work, ['push', '-q', `${forge.url}/acme/api.git`, 'HEAD:refs/heads/sneaky'], token);
      expect(r.code, String(token)).not.toBe(0);
      expect(r.err).toMatch(why);
    }
    expect(revParse(forge.repos.get('acme/api')!.gitDir, 'refs/heads/sneaky')).toBeNull();
    expect(
      (await git(mkdtempSync(join(dir, 'anon-')), ['clone', '-q', `${forge.url}/acme/api.git`, '.'])).code,
    ).not.toBe(0);
  }, 60_000);
});
