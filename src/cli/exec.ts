import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  bubblewrapProblem,
  commandView,
  pidNamespaceArgv,
  storeFiles,
  type NetworkBridge,
} from '../kernel/bubblewrap.js';
import { blockedLines, startCommandNetwork, type CommandNetwork } from '../agent/contain/command-network.js';
import { commandNetworkAllow, type CommandNetworkAllow } from '../config/setting-parsers.js';
import { homedir } from 'node:os';
import { defaultDatabase, isPostgresUrl } from '../store/sql/open-sql.js';
import { CHILD_ENV_ALLOWLIST } from '../launcher/command.js';
import { redactSecrets, secretValues, SECRET_VARIABLES } from '../kernel/redact.js';
import type { CliIo, ExecOptions, ExecResult } from './client.js';

// How the CLI runs a QA case or a deploy command: `sh -c` in the current
// directory, output (stdout and stderr together) kept for the evidence. The
// command is the repository's (a merged PR can change it), so it gets what
// the launcher gives a run (TR06): the allowlist and the run facts, never the
// operator token, the app key or the database; and its output has secrets
// taken out before it becomes evidence.

const OUTPUT_LIMIT = 16_000;

/** Variables that never cross to a repository's command, whatever YOKE_PASS_ENV says. */
const NEVER_PASSED = new Set([
  'YOKE_TOKEN',
  'YOKE_API_TOKENS',
  'PRIVATE_KEY',
  'PRIVATE_KEY_PATH',
  'WEBHOOK_SECRET',
  'YOKE_DATABASE_URL',
  'YOKE_DB_PATH',
  'YOKE_URL',
]);

/**
 * A repository command's environment: the allowlist of yoke's own, the
 * variables the operator names in YOKE_PASS_ENV (a deploy's KUBECONFIG, say),
 * and the run facts.
 */
export function commandEnv(
  parent: Record<string, string | undefined>,
  facts: Record<string, string>,
): Record<string, string> {
  const env: Record<string, string> = {};
  const passed = (parent.YOKE_PASS_ENV ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n && !NEVER_PASSED.has(n));
  for (const name of [...CHILD_ENV_ALLOWLIST, ...passed]) if (parent[name] !== undefined) env[name] = parent[name]!;
  return { ...env, ...facts };
}

/** What a repository's command must not reach on disk: the app key's file, the store's files, and folders holding them. */
export interface OutOfReach {
  /** Folders shown empty. */
  dirs: string[];
  /** Files shown empty. */
  files: string[];
}

/**
 * TR30: what a command may not read or write, from the CLI's environment and what the caller adds (the
 * database door's store and key): the app key's file, and the SQLite store with its WAL, journal and
 * shared memory. The store's folder is hidden whole unless the checkout lies in it.
 */
export function outOfReach(
  parent: Record<string, string | undefined>,
  cwd: string,
  extra: readonly string[] = [],
): OutOfReach {
  const files = new Set<string>();
  const dirs = new Set<string>();
  const checkout = resolve(cwd);
  const store = defaultDatabase(parent);
  const stores = [...(isPostgresUrl(store) ? [] : [store]), ...extra.filter((p) => !isPostgresUrl(p))];
  for (const path of [parent.PRIVATE_KEY_PATH, ...stores]) {
    if (!path || path === ':memory:') continue;
    const abs = resolve(path);
    for (const f of storeFiles(abs)) files.add(f);
  }
  for (const path of stores) {
    if (path === ':memory:') continue;
    const dir = dirname(resolve(path));
    if (existsSync(dir) && dir !== '/' && !(checkout === dir || checkout.startsWith(`${dir}/`))) dirs.add(dir);
  }
  return { dirs: [...dirs], files: [...files].filter((f) => ![...dirs].some((d) => f.startsWith(`${d}/`))) };
}

/**
 * TR30: bubblewrap's arguments for a command: a pid namespace of its own (the CLI's process, and its
 * environ, out of sight); everything read-only but its checkout and a scratch /tmp (`commandView`: no home of
 * the CLI's user, no /run or /var/run, so no host socket there); the app key and the store out of reach; a
 * network of its own, reaching what YOKE_COMMAND_NETWORK_ALLOW names through `net` (a deploy's hosts).
 */
export function containedArgv(
  bwrap: string,
  command: string,
  /** The checkout it runs in, what is out of its reach, the folders it may write besides, and the CLI's environment. */
  at: {
    cwd: string;
    hidden: OutOfReach;
    writable?: readonly string[];
    env: Record<string, string | undefined>;
    net: NetworkBridge | 'host';
  },
): string[] {
  const { cwd, hidden, writable = [], env, net } = at;
  // A repository's command is written by whoever can push: nothing it names is shown again.
  const view = commandView({
    cwd,
    own: [],
    hide: hidden.dirs,
    hideFiles: hidden.files,
    writable: writable.filter((w) => existsSync(w)),
    homes: [env.HOME, homedir()],
    path: env.PATH,
  });
  return [bwrap, ...pidNamespaceArgv(view, resolve(cwd), command, net)];
}

/** The folders the operator lets commands write besides their checkout (YOKE_COMMAND_WRITABLE, absolute paths). */
const writableOf = (parent: Record<string, string | undefined>): string[] =>
  (parent.YOKE_COMMAND_WRITABLE ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.startsWith('/'));

/** Why bubblewrap cannot contain a command here, or null when it can (asked once per process). */
export const commandContainmentProblem = (bwrap = 'bwrap'): string | null => bubblewrapProblem(bwrap);

/** What a repository's command may reach on the network (YOKE_COMMAND_NETWORK_ALLOW), or what is wrong with the setting. */
export function commandNetworkOf(parent: Record<string, string | undefined>): CommandNetworkAllow | { error: string } {
  const r = commandNetworkAllow.safeParse(parent.YOKE_COMMAND_NETWORK_ALLOW ?? '');
  return r.success
    ? r.data
    : { error: `YOKE_COMMAND_NETWORK_ALLOW ${r.error.issues[0]?.message ?? 'is not a list of hosts'}` };
}

/** A command's start: its argv, and the network it was given (closed when it ends). */
export type CommandLaunch = { argv: string[]; contained: boolean; net: CommandNetwork | null } | { error: string };

/**
 * How a repository's command starts: contained (TR30), or not at all. The operator may choose to run it
 * without with YOKE_COMMANDS_UNCONTAINED=1, knowing the command can then read the CLI's own environment.
 */
export async function commandLaunch(
  command: string,
  parent: Record<string, string | undefined>,
  cwd = process.cwd(),
  extraHidden: readonly string[] = [],
): Promise<CommandLaunch> {
  const bwrap = parent.YOKE_BWRAP || 'bwrap';
  const problem = commandContainmentProblem(bwrap);
  if (!problem) {
    const allow = commandNetworkOf(parent);
    if ('error' in allow) return allow;
    const net = allow.kind === 'own' ? await startCommandNetwork(allow) : null;
    return {
      argv: containedArgv(bwrap, command, {
        cwd,
        hidden: outOfReach(parent, cwd, extraHidden),
        writable: writableOf(parent),
        env: parent,
        net: net ?? 'host',
      }),
      contained: true,
      net,
    };
  }
  if (parent.YOKE_COMMANDS_UNCONTAINED === '1') return { argv: ['sh', '-c', command], contained: false, net: null };
  return {
    error: `${problem}: yoke runs a repository's QA and deploy commands in pid and network namespaces of their own, so that they cannot read the CLI's token or reach the machine's loopback services. Install it (\`sudo apt-get install -y bubblewrap\`; on Ubuntu 24.04 also \`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\`), or set YOKE_COMMANDS_UNCONTAINED=1 to run them without.`,
  };
}

export async function nodeExec(
  command: string,
  env: Record<string, string>,
  /** Where it runs (this folder by default), the CLI's environment it starts from, and what else it must not see. */
  at: { cwd?: string; parent?: Record<string, string | undefined>; opts?: ExecOptions } = {},
): Promise<ExecResult> {
  const { cwd = process.cwd(), parent = process.env, opts = {} } = at;
  const known = secretValues(parent, SECRET_VARIABLES);
  const launch = await commandLaunch(command, parent, cwd, opts.hide);
  if ('error' in launch) return { code: null, output: '', error: launch.error };
  const ended = await new Promise<ExecResult>((resolve) => {
    // bubblewrap itself gets only the command's environment: it is the one process the command can see besides its own.
    const child = spawn(launch.argv[0]!, launch.argv.slice(1), {
      cwd,
      // Its scratch folder is the sandbox's own /tmp.
      env: { ...commandEnv(parent, env), ...(launch.contained ? { TMPDIR: '/tmp' } : {}), ...launch.net?.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => resolve({ code: null, output, error: err.message }));
    child.on('close', (code) => resolve({ code, output }));
  });
  // What it tried to reach and was refused ends its output, where the person reading the evidence looks.
  const refused = blockedLines(launch.net?.blocked() ?? []);
  await launch.net?.close();
  const output = refused.length
    ? `${ended.output}${ended.output.endsWith('\n') || !ended.output ? '' : '\n'}${refused.join('\n')}\n`
    : ended.output;
  return { ...ended, output: redactSecrets(output.slice(-OUTPUT_LIMIT), known) };
}

export function nodeHead(cwd = process.cwd()): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

export const nodeReadFile = (path: string): string => readFileSync(path, 'utf8');

/** The CLI as someone runs it in a checkout: commands run there, evidence files are read from there. */
export function checkoutIo(dir: string, env: CliIo['env'], out: CliIo['out'], err: CliIo['err']): CliIo {
  return {
    out,
    err,
    env,
    fetch,
    // As in a person's shell: what the CLI was started with is what its commands may be passed (YOKE_PASS_ENV).
    exec: (command, more, opts) => nodeExec(command, more, { cwd: dir, parent: { ...process.env, ...env }, opts }),
    head: () => nodeHead(dir),
    readFile: (p) => readFileSync(join(dir, p), 'utf8'),
  };
}
