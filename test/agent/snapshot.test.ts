import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempFolders } from './helpers.js';
import { describe, expect, it } from 'vitest';
import { snapshotWorkTree } from '../../src/agent/run.js';
import { jobSecretValues, scanDiff, secretRefusal } from '../../src/agent/secret-scan.js';
import { redactSecrets } from '../../src/kernel/redact.js';
import { checkHandover } from '../../src/agent/deliver.js';

// The runner's own git work after the agent ran: TR18 (nothing the agent
// planted in .git runs), TR16 (no secret leaves in a commit), TR17 (the
// handover is checked).

const tmp = tempFolders();

function checkout(): { cwd: string; base: string } {
  const cwd = tmp('yoke-snap-co-');
  const g = (...a: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd, encoding: 'utf8' }).trim();
  g('init', '-q', '-b', 'main');
  writeFileSync(join(cwd, 'README.md'), '# x\n');
  g('add', '-A');
  g('commit', '-qm', 'init');
  return { cwd, base: g('rev-parse', 'HEAD') };
}

/** What an injected agent plants in the checkout's .git: an fsmonitor, hooks and a clean filter that each leave a mark when run. */
function plant(cwd: string, mark: string): void {
  const hook = `#!/bin/sh\necho ran >> ${mark}\n`;
  mkdirSync(join(cwd, '.git', 'hooks'), { recursive: true });
  for (const h of ['pre-commit', 'post-commit', 'commit-msg', 'pre-push', 'post-checkout']) {
    writeFileSync(join(cwd, '.git', 'hooks', h), hook);
    chmodSync(join(cwd, '.git', 'hooks', h), 0o755);
  }
  writeFileSync(join(cwd, 'evil.sh'), hook);
  chmodSync(join(cwd, 'evil.sh'), 0o755);
  execFileSync('git', ['config', 'core.fsmonitor', join(cwd, 'evil.sh')], { cwd });
  execFileSync('git', ['config', 'filter.x.clean', join(cwd, 'evil.sh')], { cwd });
  writeFileSync(join(cwd, '.gitattributes'), '* filter=x\n');
}

describe('the runner snapshots the agent\u2019s work', () => {
  it('TR18 the fsmonitor, hooks and filter an agent planted in .git never run while the runner commits and bundles; the bundle holds the work tree on the base', () => {
    const { cwd, base } = checkout();
    const mark = join(tmp('yoke-snap-mark-'), 'ran');
    plant(cwd, mark);
    writeFileSync(join(cwd, 'lib.js'), 'export const x = 1;\n');
    const bundle = join(tmp('yoke-snap-out-'), 'work.bundle');
    const r = snapshotWorkTree(cwd, base, { message: 'Work (#1)\n\nYoke-Run: r1', bundle, secrets: [] });
    expect(r.kind).toBe('bundled');
    expect(existsSync(mark)).toBe(false);
    const verify = tmp('yoke-snap-verify-');
    execFileSync('git', ['clone', '-q', cwd, verify]);
    execFileSync('git', ['fetch', '-q', bundle, 'HEAD:refs/heads/got'], { cwd: verify });
    const commit = r.kind === 'bundled' ? r.commit : '';
    expect(execFileSync('git', ['rev-parse', 'got'], { cwd: verify, encoding: 'utf8' }).trim()).toBe(commit);
    expect(execFileSync('git', ['show', `${commit}:lib.js`], { cwd: verify, encoding: 'utf8' })).toBe(
      'export const x = 1;\n',
    );
    expect(execFileSync('git', ['rev-parse', `${commit}^`], { cwd: verify, encoding: 'utf8' }).trim()).toBe(base);
    // The checkout's own git, as the old runner called it, does run what was planted: the test can fail.
    const old = spawnSync('git', ['status', '--porcelain'], { cwd, encoding: 'utf8' });
    expect(existsSync(mark)).toBe(true);
    // git's own word on the planted fsmonitor, which printed nothing it understood.
    expect(old.stderr).toContain('Empty last update token');
  });

  it('TR16 a change that holds a value the job was given, or a token shape, is refused naming the file and line, never the value', () => {
    const { cwd, base } = checkout();
    const key = 'sk-ant-api03-' + 'Z'.repeat(40);
    const given = 'a-job-value-0123456789';
    writeFileSync(join(cwd, 'env.txt'), `PATH=/bin\nANTHROPIC_API_KEY=${key}\n`);
    writeFileSync(join(cwd, 'notes.md'), `one\ntwo\nthe value: ${given}\n`);
    const bundle = join(tmp('yoke-snap-out-'), 'work.bundle');
    const r = snapshotWorkTree(cwd, base, {
      message: 'Work',
      bundle,
      secrets: jobSecretValues({ SOME_TOKEN: given, PATH: '/usr/bin:/bin:/usr/local/bin' }),
    });
    expect(r).toEqual({
      kind: 'secret',
      why: "the agent's change holds a secret, so nothing was pushed: env.txt line 2 (an Anthropic key); notes.md line 3 (a value this job was given). Remove it from the change (and rotate the secret if it was real), then start the work again.",
    });
    expect(JSON.stringify(r)).not.toContain(key);
    expect(JSON.stringify(r)).not.toContain(given);
    expect(existsSync(bundle)).toBe(false);
  });

  it('TR16 token shapes in file names and added lines are found; removed lines and ordinary text are not', () => {
    const diff = [
      'diff --git a/a b/ghp_' + 'a'.repeat(36),
      '+++ b/ghp_' + 'a'.repeat(36),
      '@@ -0,0 +1,2 @@',
      '+AKIAABCDEFGHIJKLMNOP',
      '+hello',
      '+++ b/b.txt',
      '@@ -1,1 +1,1 @@',
      '-ghs_' + 'b'.repeat(36),
      '+fine',
      '+++ b/key.pem',
      '@@ -0,0 +5,1 @@',
      '+-----BEGIN RSA PRIVATE KEY-----',
    ].join('\n');
    expect(secretRefusal(scanDiff(diff, []))).toBe(
      "the agent's change holds a secret, so nothing was pushed: (a file name) (a GitHub token); ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa line 1 (an AWS access key); key.pem line 5 (a private key). Remove it from the change (and rotate the secret if it was real), then start the work again.",
    );
  });

  it('TR38 the model key written base64-encoded (at any offset), reversed, in hex or split in two is found in the change, and redacted from what is published, host names included', () => {
    const key = 'sk-ant-api03-Qm9vdHN0cmFwLWtleS1mb3ItdGVzdHMtb25seQ_0123456789abcdefABCDEF';
    const values = jobSecretValues({ ANTHROPIC_API_KEY: key });
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const forms: [string, string][] = [
      ['base64', b64(key)],
      ['base64, after a prefix', b64(`export KEY="${key}"`)],
      ['base64url', Buffer.from(`x=${key}`).toString('base64url')],
      ['reversed', [...key].reverse().join('')],
      ['hex', Buffer.from(key).toString('hex')],
      ['split in two', `const a = "${key.slice(0, 40)}";\n+const b = "${key.slice(40)}";`],
    ];
    for (const [how, text] of forms) {
      const diff = ['+++ b/notes.md', '@@ -0,0 +1,2 @@', `+${text}`].join('\n');
      expect(
        scanDiff(diff, values).map((f) => f.kind),
        how,
      ).toContain('a value this job was given');
      expect(redactSecrets(`said: ${text}`, values), how).toContain('[redacted]');
    }
    // A host name the agent chose, listed as refused: redacted as any text is.
    const host = `${Buffer.from(key).toString('hex').slice(0, 60)}.exfil.example`;
    expect(redactSecrets(`- ${host}, by: curl`, values)).not.toContain(Buffer.from(key).toString('hex').slice(0, 40));
    // Ordinary text, and a short piece of the key (under the piece size), is left alone.
    expect(scanDiff(['+++ b/a.md', '@@ -0,0 +1,1 @@', '+sk-ant-api03 is the key prefix'].join('\n'), values)).toEqual(
      [],
    );
  });

  it('TR17 the deliver job takes only 40-hex commits, and a base that is the head yoke dispatched', () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    expect(checkHandover({ base: a, commit: b }, a)).toBeNull();
    expect(checkHandover({ base: '--upload-pack=x', commit: b }, null)).toBe(
      "result.json's base is not a 40-hex commit id",
    );
    expect(checkHandover({ base: a, commit: 'HEAD' }, a)).toBe("result.json's commit is not a 40-hex commit id");
    expect(checkHandover({ base: b, commit: b }, a)).toBe(
      "result.json's base bbbbbbb is not the commit yoke dispatched the run on (aaaaaaa)",
    );
  });
});
