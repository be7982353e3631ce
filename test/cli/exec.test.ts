import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandContainmentProblem, commandEnv, nodeExec, outOfReach } from '../../src/cli/exec.js';
import { outsideTmp } from '../agent/helpers.js';
import { redactSecrets } from '../../src/kernel/redact.js';

// A QA case or deploy command is the repository's: a merged PR can change it
// to print whatever reaches it. It gets the launcher's allowlist and the run
// facts (TR06), and its output has secrets taken out before it becomes
// evidence or a tracking issue's text (TR07).

const dir = mkdtempSync(join(tmpdir(), 'yoke-exec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const writable = (d: string) => {
  try {
    accessSync(d, constants.W_OK);
    return true;
  } catch {
    return false;
  }
};

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
  it("TR06 get the allowlist, the variables the operator passes (never yoke's own secrets) and the run facts", () => {
    expect(commandEnv(PARENT, { YOKE_STAGE: 'staging' })).toEqual({
      PATH: process.env.PATH,
      HOME: dir,
      KUBECONFIG: '/etc/deploy/kubeconfig',
      YOKE_STAGE: 'staging',
    });
  });

  it('TR06 TR07 a case that prints the operator token, the app key and its whole environment records none of them', async () => {
    const res = await nodeExec(
      'echo "token=$YOKE_TOKEN key=$PRIVATE_KEY db=$YOKE_DB_PATH"; env | sort; echo "printed by hand: operator-token-0123456789abcdef0123 ghs_abcdefghijklmnopqrstuvwx1234"',
      { YOKE_STAGE: 'staging' },
      { cwd: dir, parent: PARENT },
    );
    expect(res.code).toBe(0);
    expect(res.output).toContain('token= key= db=');
    expect(res.output).toContain('YOKE_STAGE=staging');
    expect(res.output).toContain('printed by hand: [redacted] [redacted]');
    for (const secret of [
      'operator-token-0123456789abcdef0123',
      'second-operator-token',
      'BEGIN RSA PRIVATE KEY',
      'webhook-secret',
      '/var/lib/yoke',
      'ghs_abcdef',
    ])
      expect(res.output).not.toContain(secret);
  });

  it.skipIf(commandContainmentProblem() !== null)(
    'TR30 a case run by the real CLI process, which holds the token and the app key in its own environment, reads every /proc/*/environ it can see and finds neither',
    () => {
      const seen = join(dir, 'seen.txt');
      const probe = `for f in /proc/$PPID/environ /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f"; done > ${seen} 2>/dev/null; ps -eo args >> ${seen}; true`;
      // A child process whose real environment holds the secrets (not a variable a test assigned): as the CLI runs on an operator's machine.
      const script = `import { nodeExec } from ${JSON.stringify(new URL('../../src/cli/exec.ts', import.meta.url).pathname)}; const r = await nodeExec(${JSON.stringify(probe)}, { YOKE_STAGE: 'staging' }); console.log(JSON.stringify(r));`;
      const run = (extra: Record<string, string>) => {
        const r = spawnSync(
          process.execPath,
          ['--import', import.meta.resolve('tsx'), '--input-type=module', '-e', script],
          {
            cwd: dir,
            encoding: 'utf8',
            env: {
              PATH: process.env.PATH ?? '/usr/bin:/bin',
              HOME: dir,
              YOKE_TOKEN: 'operator-token-0123456789abcdef0123',
              PRIVATE_KEY: KEY,
              ...extra,
            },
          },
        );
        expect(r.status, r.stderr).toBe(0);
        return {
          result: JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { code: number },
          seen: readFileSync(seen, 'utf8'),
        };
      };
      const contained = run({});
      expect(contained.result.code).toBe(0);
      expect(contained.seen).toContain('YOKE_STAGE=staging');
      for (const secret of ['operator-token-0123456789abcdef0123', 'MIIEowIBAAKCAQEAx0bQ'])
        expect(contained.seen).not.toContain(secret);
      // The same probe run uncontained, as the operator may choose: the CLI's environment is there to read (the test can fail).
      const open = run({ YOKE_COMMANDS_UNCONTAINED: '1', YOKE_BWRAP: '/nonexistent/bwrap' });
      expect(open.seen).toContain('operator-token-0123456789abcdef0123');
    },
  );

  // A host socket where a machine keeps them (docker.sock sits in /run): only a user who may write there can plant one.
  const runWritable = writable('/run');
  if (!runWritable) {
    const msg =
      'TR30 reach test skipped: it listens on a socket under /run, which this user may not write (CI runs as root)';
    if (process.env.CI) throw new Error(msg);
    console.warn(msg);
  }
  it.skipIf(commandContainmentProblem() !== null || !runWritable)(
    'TR30 a command reads and writes only its checkout and a scratch folder: the app key\u2019s file, the store (named by the environment or by the door), the CLI\u2019s install and the sockets under /run are out of its reach',
    async () => {
      const base = mkdtempSync(join(outsideTmp(), 'yoke-exec-reach-'));
      try {
        const keyFile = join(base, 'keys', 'app.pem');
        const store = join(base, 'data', 'yoke.db');
        const doorStore = join(base, 'door', 'door.db');
        const install = join(base, 'install', 'yoke.js');
        const checkout = join(base, 'checkout');
        for (const f of [keyFile, store, `${store}-wal`, doorStore, install])
          mkdirSync(dirname(f), { recursive: true });
        mkdirSync(checkout);
        writeFileSync(keyFile, KEY);
        writeFileSync(store, 'the store');
        writeFileSync(`${store}-wal`, 'the store wal');
        writeFileSync(doorStore, 'the door store');
        writeFileSync(install, 'the install');
        const runDir = mkdtempSync('/run/yoke-exec-sock-');
        const sock = join(runDir, 'host.sock');
        const open = new Set<Socket>();
        const server = createServer((c) => {
          open.add(c);
          c.on('error', () => undefined).end('host-socket-answered');
        });
        await new Promise<void>((r) => server.listen(sock, r));
        const probe = [
          `cat ${keyFile} ${store} ${store}-wal ${doorStore} > seen.txt 2>&1`,
          `echo forged >> ${store}; echo forged >> ${doorStore}; echo forged >> ${install}`,
          `echo planted > ${join(base, 'planted')}`,
          'echo mine > mine.txt; echo scratch > /tmp/scratch.txt && cat /tmp/scratch.txt >> seen.txt',
          `curl -sS -m 3 --unix-socket ${sock} http://host/ >> seen.txt 2>&1; echo "socket=$?" >> seen.txt`,
          'ls /run >> seen.txt 2>&1; true',
        ].join('; ');
        const res = await nodeExec(
          probe,
          {},
          {
            cwd: checkout,
            parent: { PATH: process.env.PATH, PRIVATE_KEY_PATH: keyFile, YOKE_DB_PATH: store },
            opts: { hide: [doorStore] },
          },
        );
        for (const c of open) c.destroy();
        await new Promise<void>((r) => server.close(() => r()));
        rmSync(runDir, { recursive: true, force: true });
        expect(res.code).toBe(0);
        const seen = readFileSync(join(checkout, 'seen.txt'), 'utf8');
        for (const secret of ['MIIEowIBAAKCAQEAx0bQ', 'the store', 'the door store'])
          expect(seen).not.toContain(secret);
        expect(seen).not.toContain('host-socket-answered');
        expect(seen).toContain('scratch');
        expect(seen).not.toContain('socket=0');
        expect(readFileSync(store, 'utf8')).toBe('the store');
        expect(readFileSync(doorStore, 'utf8')).toBe('the door store');
        expect(readFileSync(install, 'utf8')).toBe('the install');
        expect(existsSync(join(base, 'planted'))).toBe(false);
        expect(readFileSync(join(checkout, 'mine.txt'), 'utf8')).toBe('mine\n');
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    },
  );

  it('TR30 the store named by the environment, the door\u2019s and the key file are out of reach; the store\u2019s folder whole unless the checkout lies in it', () => {
    const base = mkdtempSync(join(outsideTmp(), 'yoke-exec-oor-'));
    try {
      for (const d of ['data', 'keys', 'co']) mkdirSync(join(base, d));
      for (const f of ['data/yoke.db', 'data/yoke.db-wal', 'keys/app.pem', 'co/door.db'])
        writeFileSync(join(base, f), '');
      expect(
        outOfReach(
          { PRIVATE_KEY_PATH: join(base, 'keys/app.pem'), YOKE_DB_PATH: join(base, 'data/yoke.db') },
          join(base, 'co'),
          [join(base, 'co/door.db'), 'postgres://u@h/db'],
        ),
      ).toEqual({ dirs: [join(base, 'data')], files: [join(base, 'keys/app.pem'), join(base, 'co/door.db')] });
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('TR30 without bubblewrap a command is not run, and the refusal names the fix', async () => {
    const res = await nodeExec(
      'true',
      {},
      { cwd: dir, parent: { PATH: process.env.PATH, YOKE_BWRAP: '/nonexistent/bwrap' } },
    );
    expect(res).toEqual({
      code: null,
      output: '',
      error:
        "bubblewrap is not installed: yoke runs a repository's QA and deploy commands in pid and network namespaces of their own, so that they cannot read the CLI's token or reach the machine's loopback services. Install it (`sudo apt-get install -y bubblewrap`; on Ubuntu 24.04 also `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`), or set YOKE_COMMANDS_UNCONTAINED=1 to run them without.",
    });
  });

  it.skipIf(commandContainmentProblem() !== null)(
    'TR30 a deploy command reaches the loopback port YOKE_COMMAND_NETWORK_ALLOW names and no other listener of the machine; what it was refused ends its output, naming the setting',
    async () => {
      const open = new Set<Socket>();
      const serve = (answer: string) =>
        createServer((c) => {
          open.add(c);
          c.on('error', () => undefined).end(`HTTP/1.0 200 OK\r\n\r\n${answer}`);
        });
      const listen = (s: ReturnType<typeof serve>) =>
        new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as { port: number }).port)));
      const target = serve('deploy-target-answered');
      const other = serve('other-listener-answered');
      try {
        const [targetPort, otherPort] = [await listen(target), await listen(other)];
        const probe = [
          `curl -sS -m 3 http://127.0.0.1:${targetPort}/`,
          `curl -sS -m 3 --noproxy '*' http://127.0.0.1:${otherPort}/; echo " other=$?"`,
          'curl -sS -m 3 http://metadata.google.internal/ >/dev/null; true',
        ].join('; ');
        const res = await nodeExec(
          probe,
          {},
          { cwd: dir, parent: { PATH: process.env.PATH, YOKE_COMMAND_NETWORK_ALLOW: `127.0.0.1:${targetPort}` } },
        );
        expect(res.code).toBe(0);
        expect(res.output).toContain('deploy-target-answered');
        expect(res.output).not.toContain('other-listener-answered');
        expect(res.output).toContain(' other=7');
        expect(res.output.trimEnd().split('\n').at(-1)).toBe(
          'yoke refused metadata.google.internal to `curl -sS -m 3 http://metadata.google.internal/`: add it to YOKE_COMMAND_NETWORK_ALLOW if it needs it',
        );
        // A setting that names no host is refused before anything runs, saying what it takes.
        expect(
          await nodeExec(
            'true',
            {},
            { cwd: dir, parent: { PATH: process.env.PATH, YOKE_COMMAND_NETWORK_ALLOW: '10.0.0.1' } },
          ),
        ).toEqual({
          code: null,
          output: '',
          error:
            'YOKE_COMMAND_NETWORK_ALLOW "10.0.0.1" is not a host name (registry.npmjs.org), a subdomain glob (*.example.com), a loopback port (127.0.0.1:3000) or "host"',
        });
      } finally {
        for (const c of open) c.destroy();
        target.close();
        other.close();
      }
    },
  );

  it('TR07 known secret shapes are taken out of published text, and ordinary output is left alone', () => {
    expect(
      redactSecrets(
        `deployed abc123 to staging\n${KEY}\nAuthorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXRleHQ\ngh token github_pat_11ABCDEFG0123456789_abcdefghijklmnop sk-ant-api03-abcdefghijklmnop`,
      ),
    ).toBe('deployed abc123 to staging\n[redacted]\nAuthorization: Bearer [redacted]\ngh token [redacted] [redacted]');
    expect(redactSecrets('all 12 tests passed in 3.2s (sha 0123456789abcdef0123456789abcdef01234567)')).toBe(
      'all 12 tests passed in 3.2s (sha 0123456789abcdef0123456789abcdef01234567)',
    );
  });
});
