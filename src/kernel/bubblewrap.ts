import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync, statSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';

// The filesystem a contained process sees (TR06, TR20, TR30, TR35), as bubblewrap
// arguments. Every piece of code yoke runs for someone else (the agent's
// tools, the PR's code under validate.sh, a run of the command launcher, a
// repository's QA or deploy command) gets a view built here, so what each can
// reach is declared once and read by the tests.
//
// A host socket is a file: `connect()` on it passes a network namespace and a
// read-only bind alike (docker.sock under /run is the root of the runner's
// machine). So a view either shows the system's own folders only (`system`:
// /usr, /etc, /opt and their like, never /run, /var, /home or /tmp), or shows
// everything read-only with /run, /var and the named files taken out
// (`whole`, for commands that need the operator's tools; their network is their own too).

/** The folders a `system` view shows, read-only, when the machine has them: programs, libraries and settings, no sockets. */
export const SYSTEM_ROOTS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt', '/sys'];

/** Where a machine keeps its services' sockets: never shown to contained code. */
export const SOCKET_DIRS = ['/run', '/var/run'];

/**
 * What a `whole` view shows empty besides the socket folders: the scratch folders, and /var, where a
 * machine's state lives (lxd's socket under /var/snap, docker's /var/lib/docker, databases' files).
 */
const WHOLE_EMPTIED = ['/tmp', '/var'];

/** Files a `whole` view still needs from /run: the resolver's settings (Ubuntu points /etc/resolv.conf there). */
const RESOLVER_FILES = ['/run/systemd/resolve/stub-resolv.conf', '/run/systemd/resolve/resolv.conf'];

/** One system root: a folder bound read-only, or a symlink made again (`/bin -> usr/bin`). */
export interface Root {
  path: string;
  link: string | null;
}

export interface FsView {
  /** `system`: only `roots`; `whole`: all of `/` read-only, less the socket folders. */
  base: { kind: 'system'; roots: Root[] } | { kind: 'whole'; resolverFiles: string[] };
  /** Folders that show empty (an empty tmpfs over each): the runner's home and temp, the store's folder. */
  hide: string[];
  /** Files that show empty (/dev/null bound over each): the app key, the store, an env file. */
  hideFiles: string[];
  /** Folders shown read-only on top (an agent CLI's install inside a hidden home). */
  ro: string[];
  /** Folders shown writable: the checkout, a scratch folder. */
  rw: string[];
}

/** The system roots this machine has, each a folder or a symlink. */
export function systemRoots(): Root[] {
  const out: Root[] = [];
  for (const path of SYSTEM_ROOTS) {
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) out.push({ path, link: readlinkSync(path) });
      else if (st.isDirectory()) out.push({ path, link: null });
    } catch {
      /* not on this machine */
    }
  }
  return out;
}

/** The resolver's files that exist here, for a `whole` view. */
export function resolverFiles(): string[] {
  return RESOLVER_FILES.filter((f) => existsSync(f));
}

/** bubblewrap's arguments for a view: pure, the tests read it. */
export function viewArgs(view: FsView): string[] {
  const out: string[] = [];
  if (view.base.kind === 'system') {
    for (const r of view.base.roots)
      out.push(...(r.link === null ? ['--ro-bind', r.path, r.path] : ['--symlink', r.link, r.path]));
    out.push('--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/var/tmp');
  } else {
    out.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/var');
    out.push('--tmpfs', '/var/tmp', '--tmpfs', '/run');
    for (const f of view.base.resolverFiles) out.push('--ro-bind', f, f);
  }
  // Each mount in order of depth, so that the deeper one wins: a checkout inside a hidden home shows, and a
  // store inside a writable folder does not.
  const mounts: { path: string; args: string[] }[] = [
    ...view.hide.map((h) => ({ path: h, args: ['--tmpfs', h] })),
    ...view.ro.map((k) => ({ path: k, args: ['--ro-bind', k, k] })),
    ...view.rw.map((w) => ({ path: w, args: ['--bind', w, w] })),
    ...view.hideFiles.map((f) => ({ path: f, args: ['--ro-bind', '/dev/null', f] })),
  ];
  const depth = (p: string) => p.split('/').filter(Boolean).length;
  // A folder both shown and hidden is hidden: the hiding is mounted last.
  const hidden = (m: { args: string[] }) => (m.args[0] === '--tmpfs' ? 1 : 0);
  const order = (a: (typeof mounts)[number], b: (typeof mounts)[number]) =>
    depth(a.path) - depth(b.path) || (a.path === b.path ? hidden(a) - hidden(b) : 0);
  for (const m of mounts.sort(order)) out.push(...m.args);
  return out;
}

const under = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);

/** Whether a path is seen through a view's base and not hidden (before its own binds). */
export function visibleIn(view: FsView, path: string): boolean {
  const abs = resolve(path);
  if (view.hide.some((h) => under(abs, h))) return false;
  if (view.base.kind === 'whole') return ![...WHOLE_EMPTIED, ...SOCKET_DIRS].some((d) => under(abs, d));
  // A symlinked root (`/bin -> usr/bin`) shows what its target does.
  return view.base.roots.some((r) => under(abs, r.path));
}

/**
 * The folders a contained program needs and a view does not show: each folder on PATH outside it
 * (a `node_modules/.bin` brings its `node_modules`), and node's own.
 */
export function neededDirs(view: FsView, path: string | undefined, node = process.execPath): string[] {
  const out = new Set<string>();
  const dirs = [...(path ?? '').split(':').filter(Boolean), dirname(node)];
  for (const dir of dirs) {
    const abs = resolve(dir);
    if (visibleIn(view, abs) || !existsSync(abs)) continue;
    out.add(abs.endsWith(`${sep}node_modules${sep}.bin`) ? dirname(abs) : abs);
  }
  // A folder inside another kept one is already there.
  const all = [...out];
  return all.filter((d) => !all.some((o) => o !== d && under(d, o)));
}

/** The files and folders of a SQLite store (the file, its journal, WAL and shared memory) that exist. */
export function storeFiles(dbPath: string): string[] {
  const abs = resolve(dbPath);
  return [abs, `${abs}-wal`, `${abs}-shm`, `${abs}-journal`].filter((f) => {
    try {
      return statSync(f).isFile();
    } catch {
      return false;
    }
  });
}

/** The folder a file belongs to as a project: the nearest one up holding a package.json or a .git, else its own folder. */
function projectOf(path: string): string {
  const start = statSync(path).isDirectory() ? path : dirname(path);
  for (let dir = start; dir !== dirname(dir); dir = dirname(dir))
    if (existsSync(`${dir}${sep}package.json`) || existsSync(`${dir}${sep}.git`)) return dir;
  return start;
}

/**
 * The command's own files: for each absolute path a shell command names that exists (`node /srv/yoke/run.mjs`,
 * `--import=/tmp/x/loader.mjs`), the project it lies in. A command view shows them, read-only, wherever they are.
 */
export function commandFolders(command: string): string[] {
  const out = new Set<string>();
  for (const word of command.split(/[\s=:'"]+/)) {
    if (!word.startsWith('/') || word.includes('..')) continue;
    try {
      const dir = projectOf(resolve(word));
      if (dir !== '/') out.add(dir);
    } catch {
      /* not a file here */
    }
  }
  return [...out];
}

/**
 * TR06, TR30: the view of a command yoke runs for someone else outside an agent's sandbox (a command-launcher
 * run, a repository's QA or deploy command): every folder read-only, less the socket folders and /var, a scratch /tmp and
 * /var/tmp, and the homes of yoke's user (SSH keys, `gh`'s token, cloud credentials, a desktop's docker socket
 * live there); writable, its folder and `writable`; and shown again, read-only, the folders on its PATH and `own`
 * (the operator's command's own files: `commandFolders`; never a repository's, whose command an attacker writes),
 * wherever they lie (a checkout under /tmp or a home), unless a hidden folder holds them.
 */
export function commandView(c: {
  cwd: string;
  own: readonly string[];
  hide: readonly string[];
  hideFiles: readonly string[];
  writable: readonly string[];
  homes: readonly (string | undefined)[];
  path: string | undefined;
}): FsView {
  const rw = [resolve(c.cwd), ...c.writable.map((w) => resolve(w))];
  // A home that is the command's own folder (or inside it, or one it may write) stays as it is.
  const homes = [...new Set(c.homes.filter((h): h is string => Boolean(h) && h !== '/').map((h) => resolve(h)))].filter(
    (h) => !rw.some((w) => under(h, w)),
  );
  const view: FsView = {
    base: { kind: 'whole', resolverFiles: resolverFiles() },
    hide: [...c.hide, ...homes.filter((h) => existsSync(h))],
    hideFiles: [...c.hideFiles],
    ro: [],
    rw,
  };
  // Shown again only where nothing else shows it: never inside a folder it may write (a read-only bind there
  // would take the writing away), nor inside or over a hidden one.
  const shown = (d: string) => !visibleIn(view, d) && !rw.some((w) => under(d, w));
  // Nor a folder the view empties as a whole (`/tmp` named in a command would bring back every socket there).
  const emptied = [...WHOLE_EMPTIED, '/var/tmp', ...SOCKET_DIRS, ...homes];
  const own = c.own.filter(
    (d) =>
      shown(d) &&
      !emptied.includes(d) &&
      !c.hide.some((h) => under(d, h) || under(h, d)) &&
      !SOCKET_DIRS.some((s) => under(d, s)),
  );
  view.ro.push(...own, ...neededDirs(view, c.path).filter((d) => shown(d) && !own.some((o) => under(d, o))));
  return view;
}

/** A command's own network (TR06, TR30): the forwarder's folder to show read-only, and the shell that starts it first. */
export interface NetworkBridge {
  bridge: string;
  prelude: string;
}

/**
 * bubblewrap's arguments for a shell command in pid, IPC and network namespaces of its own, seeing `view`, in
 * `cwd`: a command-launcher run (TR06), a repository's QA or deploy command (TR30). With a `net` bridge it
 * reaches what the bridge's proxy lets through and nothing else (no loopback service of the machine's, no
 * abstract socket, no cloud metadata); `host` keeps the machine's network, the operator's explicit choice.
 */
export function pidNamespaceArgv(view: FsView, cwd: string, command: string, net: NetworkBridge | 'host'): string[] {
  const shown: FsView = net === 'host' ? view : { ...view, ro: [...view.ro, net.bridge] };
  return [
    '--die-with-parent',
    '--new-session',
    '--unshare-pid',
    '--unshare-ipc',
    ...(net === 'host' ? [] : ['--unshare-net']),
    ...viewArgs(shown),
    '--chdir',
    cwd,
    '--',
    'sh',
    '-c',
    ...(net === 'host' ? [command] : [`${net.prelude}exec sh -c "$1"`, 'yoke-command', command]),
  ];
}

const probed = new Map<string, string | null>();
/** Why bubblewrap cannot give a process a pid namespace and a view here, or null when it can (asked once per process). */
export function bubblewrapProblem(bwrap = 'bwrap'): string | null {
  if (!probed.has(bwrap)) {
    const r = spawnSync(
      bwrap,
      [
        '--die-with-parent',
        '--unshare-pid',
        '--unshare-ipc',
        '--unshare-net',
        '--ro-bind',
        '/',
        '/',
        '--proc',
        '/proc',
        '--',
        'true',
      ],
      { encoding: 'utf8', timeout: 10_000 },
    );
    probed.set(
      bwrap,
      r.status === 0
        ? null
        : r.error
          ? 'bubblewrap is not installed'
          : `bubblewrap cannot make a pid or network namespace here (${(r.stderr || '').trim().split('\n')[0] || `exit ${r.status}`})`,
    );
  }
  return probed.get(bwrap)!;
}

/** How to make bubblewrap work here, after what is wrong. */
export const BUBBLEWRAP_FIX =
  'install it (`sudo apt-get install -y bubblewrap`; on Ubuntu 24.04 also `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`)';
