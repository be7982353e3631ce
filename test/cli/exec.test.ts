import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandEnv, nodeExec } from '../../src/cli/exec.js';
import { redactSecrets } from '../../src/redact.js';

// A QA case or deploy command is the repository's: a merged PR can change it
// to print whatever reaches it. It gets the launcher's allowlist and the run
// facts (TR06), and its output has secrets taken out before it becomes
// evidence or a tracking issue's text (TR07).

const dir = mkdtempSync(join(tmpdir(), 'yoke-exec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx0bQ\n-----END RSA PRIVATE KEY-----';
const PARENT = {
  PATH: process.env.PATH,
  HOME: dir,
  YOKE_TOKEN: 'operator-token-0123456789abcdef0123',
  YOKE_API_TOKENS: 'operator-token-0123456789abcdef0123,second-operator-token-abcdef012345',
  PRIVATE_KEY: KEY,
  WEBHOOK_SECRET: 'webhook-secret-0123456789abcdef',
  YOKE_DB_PATH: '/var/lib/yoke/yoke.db',
  KUBECONFIG: '/etc/deploy/kubeconfig',
  YOKE_PASS_ENV: 'KUBECONFIG, YOKE_TOKEN, PRIVATE_KEY',
};

describe('commands the repository controls', () => {
  it('TR06 get the allowlist, the variables the operator passes (never yoke\'s own secrets) and the run facts', () => {
    expect(commandEnv(PARENT, { YOKE_STAGE: 'staging' })).toEqual({ PATH: process.env.PATH, HOME: dir, KUBECONFIG: '/etc/deploy/kubeconfig', YOKE_STAGE: 'staging' });
  });

  it('TR06 TR07 a case that prints the operator token, the app key and its whole environment records none of them', async () => {
    const res = await nodeExec('echo "token=$YOKE_TOKEN key=$PRIVATE_KEY db=$YOKE_DB_PATH"; env | sort; echo "printed by hand: operator-token-0123456789abcdef0123 ghs_abcdefghijklmnopqrstuvwx1234"', { YOKE_STAGE: 'staging' }, dir, PARENT);
    expect(res.code).toBe(0);
    expect(res.output).toContain('token= key= db=');
    expect(res.output).toContain('YOKE_STAGE=staging');
    expect(res.output).toContain('printed by hand: [redacted] [redacted]');
    for (const secret of ['operator-token-0123456789abcdef0123', 'second-operator-token', 'BEGIN RSA PRIVATE KEY', 'webhook-secret', '/var/lib/yoke', 'ghs_abcdef']) expect(res.output).not.toContain(secret);
  });

  it('TR07 known secret shapes are taken out of published text, and ordinary output is left alone', () => {
    expect(redactSecrets(`deployed abc123 to staging\n${KEY}\nAuthorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXRleHQ\ngh token github_pat_11ABCDEFG0123456789_abcdefghijklmnop sk-ant-api03-abcdefghijklmnop`)).toBe(
      'deployed abc123 to staging\n[redacted]\nAuthorization: Bearer [redacted]\ngh token [redacted] [redacted]',
    );
    expect(redactSecrets('all 12 tests passed in 3.2s (sha 0123456789abcdef0123456789abcdef01234567)')).toBe('all 12 tests passed in 3.2s (sha 0123456789abcdef0123456789abcdef01234567)');
  });
});
