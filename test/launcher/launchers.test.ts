import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { homedir, networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ActionsLauncher } from '../../src/launcher/actions.js';
import { CommandLauncher, processStartTime, runArgv } from '../../src/launcher/command.js';
import { bubblewrapProblem } from '../../src/kernel/bubblewrap.js';
import { outsideTmp } from '../agent/helpers.js';
import type { LaunchSpec } from '../../src/launcher/launcher.js';
import type { Run } from '../../src/store/fleet/runs.js';
import { FakeForge } from '../helpers/fake-forge.js';

const dir = mkdtempSync(join(tmpdir(), 'yoke-launch-'));
const run = promisify(execFile);
const YOKE_LIKE = new URL('./yoke-like.ts', import.meta.url).pathname;
const KEY_TEXT = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx0bQ\n-----END RSA PRIVATE KEY-----';
const WEBHOOK = 'webhook-secret-0123456789abcdef0123456789';
const OPERATOR = 'operator-token-0123456789abcdef0123456789';
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const repo = { owner: 'acme', name: 'api', fullName: 'acme/api', installationId: 1 };
const spec = (runId: string, over: Partial<LaunchSpec> = {}): LaunchSpec => ({
  runId,
  kind: 'lander',
  repo,
  subject: 'pr#7',
  issueNumber: 3,
  prNumber: 7,
  headSha: 'abcdef1',
  baseSha: null,
  stack: [],
  landSha: null,
  deadline: Date.UTC(2026, 10, 29, 13),
  secret: 's3cret',
  apiUrl: 'http://127.0.0.1:3000',
  workflow: 'yoke-run.yml',
  ref: 'main',
  limits: { maxTurns: 60, maxUsd: null },
  rejection: null,
  ...over,
});
const runOf = (id: string, ref: string | null, launchedAt = Date.now()): Run =>
  ({ id, repo: 'acme/api', launcherRef: ref, launchedAt, kind: 'lander' }) as Run;

describe('the command launcher', () => {
  it('TR06 starts a local process with the run facts, its secret and an allowlisted environment, and sees it end', async () => {
    const out = join(dir, 'env.json');
    const exited: string[] = [];
    let done!: () => void;
    const gone = new Promise<void>((r) => (done = r));
    // yoke's own secrets are in its environment; none may reach a run.
    const parentEnv = {
      PATH: process.env.PATH,
      HOME: '/home/yoke',
      PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----',
      WEBHOOK_SECRET: 'w'.repeat(40),
      YOKE_API_TOKENS: 't'.repeat(40),
      YOKE_DB_PATH: '/var/lib/yoke/yoke.db',
      GITHUB_TOKEN: 'ghs_yokes_own',
    };
    const launcher = new CommandLauncher({
      contain: null,
      command: `node -e "require('fs').writeFileSync('${out}', JSON.stringify(process.env))"`,
      onExit: (id) => (exited.push(id), done()),
      parentEnv,
      extraEnv: { AGENT_MODEL: 'small' },
    });
    const { ref } = await launcher.start(
      spec('r-env', { kind: 'afk_auto', subject: 'issue#3', prNumber: null, headSha: null }),
    );
    expect(ref).toMatch(/^pid:\d+:\d+$/);
    await gone;
    const env = JSON.parse(readFileSync(out, 'utf8')) as Record<string, string>;
    // What the shell and node add themselves (PWD, SHLVL, _) aside, the child sees exactly this.
    for (const added of ['PWD', 'SHLVL', '_', 'OLDPWD']) delete env[added];
    expect(env).toEqual({
      PATH: process.env.PATH,
      HOME: '/home/yoke',
      AGENT_MODEL: 'small',
      YOKE_RUN_ID: 'r-env',
      YOKE_RUN_KIND: 'afk_auto',
      YOKE_REPO: 'acme/api',
      YOKE_SUBJECT: 'issue#3',
      YOKE_ISSUE: '3',
      YOKE_DEADLINE: '2026-11-29T13:00:00.000Z',
      YOKE_API_URL: 'http://127.0.0.1:3000',
      YOKE_RUN_SECRET: 's3cret',
      YOKE_LIMITS: '{"max_turns":60}',
    });
    expect(exited).toEqual(['r-env']);
    expect(await launcher.liveness(runOf('r-env', ref))).toEqual({ state: 'ended', detail: 'exit code 0' });
  });

  it('SP17 kills the process when the reaper cancels it at the deadline', async () => {
    let done!: () => void;
    const gone = new Promise<void>((r) => (done = r));
    const launcher = new CommandLauncher({
      contain: null,
      command: 'node -e "setTimeout(() => {}, 60000)"',
      onExit: () => done(),
    });
    const { ref } = await launcher.start(spec('r-long'));
    expect(await launcher.liveness(runOf('r-long', ref))).toEqual({ state: 'running' });
    await launcher.cancel(runOf('r-long', ref), repo);
    await gone;
    expect(await launcher.liveness(runOf('r-long', ref))).toEqual({ state: 'ended', detail: 'killed by SIGTERM' });
  });

  it('TR06 a run that traps SIGTERM, and a grandchild that left its process group, are killed with SIGKILL after the grace', async () => {
    const marker = join(dir, 'grandchild.pid');
    // The run ignores SIGTERM and starts a grandchild in a session of its own that ignores it too.
    const launcher = new CommandLauncher({
      contain: null,
      command: `trap '' TERM; setsid bash -c 'trap "" TERM; echo $$ > ${marker}; sleep 60' & sleep 60`,
      killGraceMs: 1_000,
    });
    const { ref } = await launcher.start(spec('r-stubborn', { kind: 'afk_auto', secret: null }));
    const child = Number(/^pid:(\d+)/.exec(ref!)![1]);
    let grandchild = 0;
    for (let i = 0; i < 50 && !grandchild; i++) {
      await new Promise((r) => setTimeout(r, 20));
      try {
        grandchild = Number(readFileSync(marker, 'utf8'));
      } catch {
        /* not yet */
      }
    }
    expect(grandchild).toBeGreaterThan(0);
    const alive = (pid: number) =>
      processStartTime(pid) !== null && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    await launcher.cancel(runOf('r-stubborn', ref), repo);
    await new Promise((r) => setTimeout(r, 100));
    expect([alive(child), alive(grandchild)]).toEqual([true, true]); // SIGTERM is ignored...
    for (let i = 0; i < 100 && (alive(child) || alive(grandchild)); i++) await new Promise((r) => setTimeout(r, 50));
    expect([alive(child), alive(grandchild)]).toEqual([false, false]); // ...SIGKILL, after the grace, is not
  });

  it('TR02 a lander gets no run secret; its exit code is its verdict, told to yoke with its output', async () => {
    const out = join(dir, 'lander-env.json');
    let exit!: (e: unknown) => void;
    const exited = new Promise((r) => (exit = r));
    const launcher = new CommandLauncher({
      contain: null,
      command: `node -e "require('fs').writeFileSync('${out}', JSON.stringify(process.env)); console.log('1 failed'); process.exit(1)"`,
      logDir: join(dir, 'logs'),
      onExit: (id, kind, e) => exit({ id, kind, ...e }),
    });
    expect(launcher.usesSecret('lander')).toBe(false);
    expect(launcher.usesSecret('fix')).toBe(true);
    await launcher.start(spec('r-judge', { secret: null }));
    expect(await exited).toEqual({ id: 'r-judge', kind: 'lander', code: 1, signal: null, outputTail: '1 failed\n' });
    expect(Object.keys(JSON.parse(readFileSync(out, 'utf8'))).filter((k) => /SECRET|TOKEN|KEY/.test(k))).toEqual([]);
  });

  it.skipIf(bubblewrapProblem() !== null)(
    'TR06 a run started by a yoke whose own environment holds the app key, the webhook secret and the operator tokens reads every /proc/*/environ it can see, the key\u2019s file, the store, yoke\u2019s .env and a sibling run\u2019s log, and writes the store: it finds and changes none of them',
    () => {
      const base = mkdtempSync(join(outsideTmp(), 'yoke-launch-reach-'));
      try {
        const out = join(base, 'out');
        mkdirSync(out);
        const keyFile = join(base, 'app.pem');
        writeFileSync(keyFile, KEY_TEXT);
        writeFileSync(join(base, '.env'), `WEBHOOK_SECRET=${WEBHOOK}\n`);
        const db = join(base, 'data', 'yoke.db');
        mkdirSync(join(base, 'data', 'yoke.db.runs'), { recursive: true });
        writeFileSync(db, 'the store');
        writeFileSync(
          join(base, 'data', 'yoke.db.runs', 'r-sibling.log'),
          'sibling run secret run-secret-of-a-sibling',
        );
        const probe = [
          'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f"; done > "$YOKE_TEST_OUT/seen.txt" 2>&1',
          `cat ${keyFile} ${db} ${join(base, '.env')} ${join(base, 'data', 'yoke.db.runs')}/*.log >> "$YOKE_TEST_OUT/seen.txt" 2>&1`,
          `echo forged >> ${db} 2>> "$YOKE_TEST_OUT/seen.txt"`,
          'ps -eo pid,args >> "$YOKE_TEST_OUT/seen.txt" 2>&1',
          'true',
        ].join('; ');
        const yoke = (extra: Record<string, string>) => {
          const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), YOKE_LIKE], {
            cwd: base,
            encoding: 'utf8',
            timeout: 30_000,
            env: {
              PATH: process.env.PATH ?? '/usr/bin:/bin',
              HOME: base,
              PRIVATE_KEY: KEY_TEXT,
              PRIVATE_KEY_PATH: keyFile,
              WEBHOOK_SECRET: WEBHOOK,
              YOKE_API_TOKENS: OPERATOR,
              YOKE_DB_PATH: db,
              YOKE_TEST_OUT: out,
              YOKE_TEST_PROBE: probe,
              YOKE_TEST_SPEC: JSON.stringify(spec('r-probe', { kind: 'lander', secret: null })),
              ...extra,
            },
          });
          expect(r.status, r.stderr).toBe(0);
          return readFileSync(join(out, 'seen.txt'), 'utf8');
        };
        const seen = yoke({});
        for (const secret of ['MIIEowIBAAKCAQEAx0bQ', WEBHOOK, OPERATOR, 'the store', 'run-secret-of-a-sibling'])
          expect(seen).not.toContain(secret);
        // Only the run's own processes are there to see: not yoke, not the test.
        expect(seen).not.toMatch(/yoke-like|vitest/);
        expect(readFileSync(db, 'utf8')).toBe('the store');
        // The same probe, run as yoke's user with nothing around it, sees it all: the test can fail.
        const open = yoke({ YOKE_TEST_UNCONTAINED: '1' });
        for (const secret of ['MIIEowIBAAKCAQEAx0bQ', WEBHOOK, OPERATOR, 'the store', 'run-secret-of-a-sibling'])
          expect(open).toContain(secret);
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    },
    60_000,
  );

  it.skipIf(bubblewrapProblem() !== null)(
    "TR06 a contained run, as a real process, writes its own folder, a scratch /tmp and the folders the operator names, and nothing else; reads nothing of yoke's home nor a socket in /var/tmp; and sees its own command's files, even under /tmp",
    async () => {
      const base = mkdtempSync(join(outsideTmp(), 'yoke-launch-view-'));
      const own = mkdtempSync(join(tmpdir(), 'yoke-launch-own-'));
      // A home where a machine keeps them (not under /tmp or /var/tmp, which the view empties anyway).
      const home = mkdtempSync(join(homedir(), '.yoke-launch-home-'));
      const open = new Set<Socket>();
      const server = createServer((c) => {
        open.add(c);
        c.on('error', () => undefined).end('host-socket-answered');
      });
      try {
        mkdirSync(join(home, '.ssh'), { recursive: true });
        writeFileSync(join(home, '.ssh', 'id_ed25519'), 'ssh-private-key-of-yokes-user');
        const work = join(base, 'work');
        const other = join(base, 'other');
        const runDir = join(base, 'run');
        for (const d of [work, join(work, 'out'), other, runDir]) mkdirSync(d);
        const sockDir = mkdtempSync('/var/tmp/yoke-launch-sock-');
        const sock = join(sockDir, 'host.sock');
        await new Promise<void>((r) => server.listen(sock, r));
        // And where lxd keeps its socket (/var/snap/lxd/common/lxd/unix.socket): anywhere under /var.
        const stateDir = mkdtempSync('/var/lib/yoke-launch-lxd-');
        const stateSock = join(stateDir, 'unix.socket');
        const lxd = createServer((c) => {
          open.add(c);
          c.on('error', () => undefined).end('state-socket-answered');
        });
        await new Promise<void>((r) => lxd.listen(stateSock, r));
        // The operator's command lives in a project under /tmp (a clone there), as YOKE_COMMAND names it; it names the
        // folder it may write too, which stays writable.
        writeFileSync(join(own, 'package.json'), '{}');
        mkdirSync(join(own, 'bin'));
        writeFileSync(join(own, 'lib.sh'), 'echo own-lib-read >> seen.txt\n');
        const probe = [
          `. ${own}/lib.sh`,
          'echo mine > mine.txt; echo scratch > /tmp/s.txt && cat /tmp/s.txt >> seen.txt',
          `echo operator > ${work}/out/w.txt`,
          `echo planted > ${other}/p.txt 2>> seen.txt`,
          `cat ${home}/.ssh/id_ed25519 >> seen.txt 2>&1`,
          `curl -sS -m 3 --unix-socket ${sock} http://host/ >> seen.txt 2>&1; echo "socket=$?" >> seen.txt`,
          `curl -sS -m 3 --unix-socket ${stateSock} http://host/ >> seen.txt 2>&1; echo "state=$?" >> seen.txt`,
          'true',
        ].join('; ');
        writeFileSync(join(own, 'bin', 'run.sh'), `${probe}\n`);
        const argv = runArgv(
          { bwrap: 'bwrap', hideFiles: [], hide: [], writable: [work], network: { kind: 'host' } },
          runDir,
          `sh ${own}/bin/run.sh ${work}/out`,
          { net: 'host', env: { HOME: home, PATH: process.env.PATH } },
        );
        const r = spawnSync('bwrap', argv, { cwd: runDir, encoding: 'utf8', env: { PATH: process.env.PATH } });
        expect(r.status, r.stderr).toBe(0);
        const seen = readFileSync(join(runDir, 'seen.txt'), 'utf8');
        expect(seen).toContain('own-lib-read');
        expect(seen).toContain('scratch');
        expect(readFileSync(join(runDir, 'mine.txt'), 'utf8')).toBe('mine\n');
        expect(readFileSync(join(work, 'out', 'w.txt'), 'utf8')).toBe('operator\n');
        expect(existsSync(join(other, 'p.txt'))).toBe(false);
        expect(existsSync(join(own, 'planted'))).toBe(false);
        expect(seen).not.toContain('ssh-private-key-of-yokes-user');
        expect(seen).not.toContain('host-socket-answered');
        expect(seen).toContain('socket=7');
        expect(seen).not.toContain('state-socket-answered');
        expect(seen).toContain('state=7');
        lxd.close();
        rmSync(sockDir, { recursive: true, force: true });
        rmSync(stateDir, { recursive: true, force: true });
      } finally {
        for (const c of open) c.destroy();
        server.close();
        rmSync(base, { recursive: true, force: true });
        rmSync(own, { recursive: true, force: true });
        rmSync(home, { recursive: true, force: true });
      }
    },
    30_000,
  );

  it.skipIf(bubblewrapProblem() !== null)(
    'TR06 a contained run, as a real process, reaches the yoke API it reports to and the loopback port the operator names, and nothing else: not a loopback listener nobody named (a metrics port), not the machine by its own address, not an abstract socket, not a host through the proxy, not a port by a header it writes to the proxy itself',
    async () => {
      const base = mkdtempSync(join(outsideTmp(), 'yoke-launch-net-'));
      const open = new Set<Socket>();
      const serve = (answer: string) => {
        const server = createServer((c) => {
          open.add(c);
          c.on('error', () => undefined).end(`HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\n${answer}`);
        });
        return server;
      };
      const listen = (server: ReturnType<typeof serve>, at: { port?: number; host?: string; path?: string }) =>
        new Promise<number>((r) =>
          server.listen(at, () => r((server.address() as { port?: number } | null)?.port ?? 0)),
        );
      const api = serve('api-answered');
      const named = serve('named-answered');
      const metrics = serve('metrics-answered');
      const abstract = serve('abstract-answered');
      const abstractName = `yoke-test-abstract-${process.pid}`;
      try {
        const apiPort = await listen(api, { port: 0, host: '127.0.0.1' });
        const namedPort = await listen(named, { port: 0, host: '127.0.0.1' });
        const metricsPort = await listen(metrics, { port: 0, host: '0.0.0.0' });
        await listen(abstract, { path: `\0${abstractName}` });
        const hostIp =
          Object.values(networkInterfaces())
            .flat()
            .find((i) => i && i.family === 'IPv4' && !i.internal)?.address ?? null;
        const out = join(base, 'out');
        mkdirSync(out);
        const db = join(base, 'yoke.db');
        writeFileSync(db, 'the store');
        const tries: [string, string][] = [
          ['api', `curl -sS -m 3 http://127.0.0.1:${apiPort}/`],
          ['named', `curl -sS -m 3 http://localhost:${namedPort}/`],
          ['metrics', `curl -sS -m 3 http://127.0.0.1:${metricsPort}/`],
          ...(hostIp
            ? ([['hostip', `curl -sS -m 3 --noproxy '*' http://${hostIp}:${metricsPort}/`]] as [string, string][])
            : []),
          // node, as the listener: it names an abstract socket padded to its whole length, as curl does not.
          [
            'abstract',
            `node -e "const c=require('net').connect({path:'\\0${abstractName}'});c.on('data',d=>process.stdout.write(d));c.on('error',e=>console.log(e.code))"`,
          ],
          ['evil', 'curl -sS -m 3 http://evil.example/'],
          // The proxy's own socket, with a header the forwarder never wrote: a loopback port nobody named.
          [
            'forged',
            `node -e "const s=require('net').connect(require('fs').readdirSync('/tmp').filter(d=>d.startsWith('yoke-net-')).map(d=>'/tmp/'+d+'/proxy.sock')[0]);s.write(JSON.stringify({kind:'loop',port:${metricsPort},command:'x'})+'\\n'+'GET / HTTP/1.0\\r\\n\\r\\n');s.pipe(process.stdout);s.on('error',e=>console.log(e.code))"`,
          ],
        ];
        const probe = [
          ...tries.map(
            ([name, cmd]) =>
              `${cmd} >> "$YOKE_TEST_OUT/seen.txt" 2>&1; echo " ${name}=$?" >> "$YOKE_TEST_OUT/seen.txt"`,
          ),
          'true',
        ].join('; ');
        // Not spawnSync: the listeners answer from this process, whose loop must go on meanwhile.
        const yoke = async (network: string) => {
          rmSync(join(out, 'seen.txt'), { force: true });
          const r = await run(process.execPath, ['--import', import.meta.resolve('tsx'), YOKE_LIKE], {
            cwd: base,
            encoding: 'utf8',
            timeout: 40_000,
            env: {
              PATH: process.env.PATH ?? '/usr/bin:/bin',
              HOME: base,
              YOKE_DB_PATH: db,
              YOKE_TEST_OUT: out,
              YOKE_TEST_PROBE: probe,
              YOKE_COMMAND_NETWORK_ALLOW: network,
              YOKE_TEST_SPEC: JSON.stringify(spec('r-net', { apiUrl: `http://127.0.0.1:${apiPort}` })),
            },
          });
          return {
            seen: readFileSync(join(out, 'seen.txt'), 'utf8'),
            exit: JSON.parse(r.stdout.trim().split('\n').pop()!) as { outputTail: string },
          };
        };
        const { seen, exit } = await yoke(`127.0.0.1:${namedPort}`);
        expect(seen).toContain('api-answered');
        expect(seen).toContain('named-answered');
        for (const no of ['metrics-answered', 'abstract-answered']) expect(seen).not.toContain(no);
        expect(seen).toContain(
          'yoke does not let this command reach evil.example: add it to YOKE_COMMAND_NETWORK_ALLOW',
        );
        expect(exit.outputTail).toContain(
          'yoke refused evil.example to `curl -sS -m 3 http://evil.example/`: add it to YOKE_COMMAND_NETWORK_ALLOW if it needs it',
        );
        expect(exit.outputTail).toContain(`yoke refused 127.0.0.1:${metricsPort} to \`x\``);
        // The same run on the machine's network (the operator's `host`) reaches them all: the test can fail.
        const wide = (await yoke('host')).seen;
        for (const yes of ['api-answered', 'named-answered', 'metrics-answered', 'abstract-answered'])
          expect(wide).toContain(yes);
      } finally {
        for (const c of open) c.destroy();
        for (const s of [api, named, metrics, abstract]) s.close();
        rmSync(base, { recursive: true, force: true });
      }
    },
    90_000,
  );

  it('TR06 knows a run it never started, and trusts a pid an earlier yoke started only with its start time', async () => {
    const launcher = new CommandLauncher({
      contain: null,
      command: 'true',
    });
    expect(await launcher.liveness(runOf('r-none', null))).toEqual({
      state: 'never_started',
      detail: 'the process was never started',
    });
    const mine = processStartTime(process.pid)!;
    expect(await launcher.liveness(runOf('r-mine', `pid:${process.pid}:${mine}`))).toEqual({ state: 'running' });
    // The same pid with another start time is another process: the run is over.
    expect(await launcher.liveness(runOf('r-reused', `pid:${process.pid}:${Number(mine) - 1}`))).toEqual({
      state: 'ended',
      detail: `pid ${process.pid} now belongs to another process`,
    });
    expect(await launcher.liveness(runOf('r-gone', 'pid:99999999:1'))).toEqual({
      state: 'ended',
      detail: 'process is gone',
    });
  });
});

describe('the actions launcher', () => {
  it('publishes the runner into the repository once, then dispatches with reach github, when runs reach yoke through GitHub', async () => {
    const forge = new FakeForge();
    const launcher = new ActionsLauncher({
      forge,
      now: () => Date.UTC(2026, 10, 29, 12),
      unseenGraceMs: 10 * 60_000,
      runner: async () => ({ code: '// runner', sha256: 'e'.repeat(64) }),
      reach: 'github',
    });
    const published: string[] = [];
    const publish = forge.publishRunner.bind(forge);
    forge.publishRunner = async (repo, sha, code) => {
      published.push(`${repo.fullName} ${sha.slice(0, 4)} ${code}`);
      return publish(repo, sha, code);
    };
    await launcher.start(spec('r-1', { secret: null }));
    await launcher.start(spec('r-2', { secret: null }));
    expect(published).toEqual(['acme/api eeee // runner']);
    expect(forge.dispatches.map((d) => [d.inputs.run_id, d.inputs.reach, d.inputs.runner_sha256])).toEqual([
      ['r-1', 'github', 'e'.repeat(64)],
      ['r-2', 'github', 'e'.repeat(64)],
    ]);
  });

  it('dispatches the workflow with the run facts as inputs, then finds, follows and cancels the workflow run', async () => {
    const forge = new FakeForge();
    let now = Date.UTC(2026, 10, 29, 12);
    const launcher = new ActionsLauncher({
      forge,
      now: () => now,
      unseenGraceMs: 10 * 60_000,
      runner: async () => ({ code: '// runner', sha256: 'f'.repeat(64) }),
      reach: 'api',
    });
    const { ref } = await launcher.start(spec('r-act', { secret: null, limits: { maxTurns: 40, maxUsd: 2.5 } }));
    expect(ref).toBe('pending:yoke-run.yml@main');
    expect(forge.runnersPublished.size).toBe(0);
    expect(forge.dispatches).toEqual([
      {
        repo: 'acme/api',
        workflow: 'yoke-run.yml',
        ref: 'main',
        inputs: {
          run_id: 'r-act',
          kind: 'lander',
          subject: 'pr#7',
          head_sha: 'abcdef1',
          deadline: '2026-11-29T13:00:00.000Z',
          api_url: 'http://127.0.0.1:3000',
          runner_sha256: 'f'.repeat(64),
          limits: '{"max_turns":40,"max_usd":2.5}',
          rejection: '',
        },
      },
    ]);
    const run = runOf('r-act', ref, now);
    expect(await launcher.liveness(run, repo)).toEqual({ state: 'running' }); // not listed yet, within the grace
    forge.workflowRuns.set('r-act', {
      id: 77,
      status: 'in_progress',
      conclusion: null,
      repositoryId: 1,
      event: 'workflow_dispatch',
    });
    expect(await launcher.liveness(run, repo)).toEqual({ state: 'running', ref: 'yoke-run.yml@main#77' });
    const found = runOf('r-act', 'yoke-run.yml@main#77', now);
    forge.workflowRuns.set('r-act', {
      id: 77,
      status: 'completed',
      conclusion: 'success',
      repositoryId: 1,
      event: 'workflow_dispatch',
    });
    expect(await launcher.liveness(found, repo)).toEqual({ state: 'ended', detail: 'workflow run 77 success' });
    await launcher.cancel(found, repo);
    expect(forge.cancelled).toEqual([77]);
    // A dispatch that never shows up is a launch that never started.
    now += 11 * 60_000;
    expect(await launcher.liveness(runOf('r-lost', 'pending:yoke-run.yml@main', now - 11 * 60_000), repo)).toEqual({
      state: 'never_started',
      detail: 'no yoke-run.yml run for r-lost appeared',
    });
  });
});
