import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { neededDirs, systemRoots, viewArgs, type FsView } from '../../kernel/bubblewrap.js';
import type { MeteredAnswer, ModelApi } from './model-answers.js';
import { ModelGateway, type ModelAuth, type RefusedRequest } from './model-gateway.js';
import type { SpendMeter } from './spend-meter.js';
import { textField } from '../../kernel/guards.js';
import { ContainProxy, forwardPrelude, proxyEnv, type BlockedAttempt, type Forward } from './contain-proxy.js';
import { FORWARDER } from './forwarder.js';

// TR20: the agent's tools run contained. The agent CLI and every command it
// starts run under bubblewrap: a pid namespace of their own (no other
// process's /proc is there to read), a network namespace with nothing but
// its own loopback, the runner's home, temp folder and credentials out of
// sight, and only the checkout and the agent's own home writable. The ways
// out are two ports on the sandbox's loopback, which a forwarder inside
// relays over a unix socket to the runner outside: a filtering proxy, which
// lets through only the hosts the opt-in file allows (`agent.network.allow`)
// and keeps every refused attempt with the command that made it; and the
// model's port, which goes to the model gateway (TR39, model-gateway.ts),
// which holds the key the agent never sees and counts what the model billed.

export interface ContainPlan {
  /** The agent's checkout: writable. */
  workspace: string;
  /** What the agent sees: the system's folders, the checkout and its home writable, the bridge read-only; no host socket. */
  view: FsView;
  /** Where the forwarder's script and the proxy's socket live (bound read-only). */
  bridge: string;
  proxyPort: number;
  /** The model gateway's port on the sandbox's loopback, or null when the agent has no model to reach through it. */
  modelPort: number | null;
}

/** The ports the forwarder listens on inside the sandbox's own network namespace, where nothing else does. */
export const PROXY_PORT = 8877;
export const MODEL_PORT = 8879;

/** bubblewrap's own arguments for a plan: every namespace unshared, the plan's view, in the checkout. */
const sandboxArgs = (plan: ContainPlan): string[] => [
  '--die-with-parent',
  '--new-session',
  '--unshare-all',
  ...viewArgs(plan.view),
  '--chdir',
  plan.workspace,
];

/** bubblewrap's arguments for a plan, then the command. Pure: the tests read it. */
export function bwrapArgs(plan: ContainPlan, command: string, args: readonly string[]): string[] {
  const out = sandboxArgs(plan);
  const forwards: Forward[] = [
    `proxy:${plan.proxyPort}`,
    ...(plan.modelPort === null ? [] : [`model:${plan.modelPort}` as const]),
  ];
  // The forwarder starts first and the agent replaces the shell; when the agent ends, bwrap ends the namespace and all left in it.
  const script = `${forwardPrelude(plan.bridge, forwards)}exec "$@"`;
  out.push('--', '/bin/sh', '-c', script, 'contain', command, ...args);
  return out;
}

/** Why containment cannot run here, naming the fix; null when it can. */
export function containmentProblem(bwrap = 'bwrap'): string | null {
  const probe = spawnSync(
    bwrap,
    [
      '--die-with-parent',
      '--unshare-all',
      '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--',
      '/bin/true',
    ],
    { encoding: 'utf8', timeout: 10_000 },
  );
  if (textField(probe.error, 'code') === 'ENOENT') {
    return "bubblewrap is not installed: add a step `sudo apt-get install -y bubblewrap` before yoke's runner (Debian and Ubuntu package it).";
  }
  if (probe.status !== 0) {
    const said = (probe.stderr || '').trim().split('\n')[0] ?? '';
    return `bubblewrap cannot make its namespaces here (${said || `exit ${probe.status}`}). On Ubuntu 24.04, AppArmor limits unprivileged user namespaces: add a step \`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\` before yoke's runner.`;
  }
  return null;
}

export interface Contained {
  command: string;
  args: string[];
  /** Variables the contained process gets on top of the agent's own. */
  env: Record<string, string>;
  /** The model's URL as the agent must be told it (the gateway on the sandbox's loopback), or null. */
  modelUrl: string | null;
  blocked(): BlockedAttempt[];
  /** TR39: the model's answers the gateway counted, in order. */
  answers(): MeteredAnswer[];
  /** TR41: the requests the gateway refused to pass on, and why. */
  refused(): RefusedRequest[];
  /** The folders the sandbox hides (the job's home and temp folder, where its credentials are). */
  hidden: readonly string[];
  /**
   * Starts `command --version` inside the same view, before the agent runs:
   * null when it ran, else what the contained process itself said (a CLI
   * installed under a hidden folder is "not found" there, though the job
   * finds it).
   */
  probe(command: string, env: Record<string, string>): string | null;
  close(): Promise<void>;
}

/** TR39: the agent's model, reached through the gateway outside. */
export interface ContainModel {
  /** Its base URL (the vendor's, or the job's), which the gateway passes each request on to. */
  upstream: string;
  api: ModelApi | null;
  auth: ModelAuth | null;
  /** Prices and admits each request (TR42); null meters nothing (an agent of your own). */
  meter?: SpendMeter | null;
  onAnswer?: (a: MeteredAnswer) => void;
}

export interface ContainOptions {
  workspace: string;
  home: string;
  /** The runner's environment (HOME, RUNNER_TEMP, PATH). */
  env: Record<string, string | undefined>;
  /** The agent's model, or null for none (the validate job's code). */
  model: ContainModel | null;
  /** `agent.network.allow`. */
  allow: readonly string[];
  /** Folders shown read-only besides the system's (the default branch's checkout a lander's validate.sh comes from). */
  readOnly?: readonly string[];
  bwrap?: string;
}

/** `command --version` in the plan's view (no network, no forwarder): null when it ran, else what it said. */
export function probeInside(
  plan: ContainPlan,
  command: string,
  env: Record<string, string>,
  bwrap = 'bwrap',
): string | null {
  const args = [...sandboxArgs(plan), '--', '/bin/sh', '-c', 'exec "$0" --version', command];
  const r = spawnSync(bwrap, args, { env, encoding: 'utf8', timeout: 60_000 });
  if (r.status === 0) return null;
  const said = `${r.stderr ?? ''}`.trim().split('\n').slice(-3).join(' ').trim();
  return said || (r.error ? (textField(r.error, 'message') ?? String(r.error)) : `exit ${r.status ?? r.signal}`);
}

/** The URL the agent is told: the gateway's port on the sandbox's loopback, with the upstream's path (`/v1` for OpenAI's). */
export function insideModelUrl(upstream: string, port = MODEL_PORT): string {
  const path = new URL(upstream).pathname.replace(/\/+$/, '');
  return `http://127.0.0.1:${port}${path}`;
}

/** Starts the proxy and the model gateway, and builds the contained command for an agent. */
export async function containAgent(opts: ContainOptions, command: string, args: readonly string[]): Promise<Contained> {
  const bridge = mkdtempSync(join(tmpdir(), 'yoke-contain-'));
  chmodSync(bridge, 0o755);
  writeFileSync(join(bridge, 'forward.cjs'), FORWARDER);
  // The gateway's socket is in a folder of its own, out of the sandbox's view: the model's port is its one way in.
  const keep = mkdtempSync(join(tmpdir(), 'yoke-gateway-'));
  const gateway = opts.model
    ? new ModelGateway({
        upstream: new URL(opts.model.upstream),
        api: opts.model.api,
        auth: opts.model.auth,
        hosts: [`127.0.0.1:${MODEL_PORT}`, `localhost:${MODEL_PORT}`],
        meter: opts.model.meter ?? null,
        ...(opts.model.onAnswer ? { onAnswer: opts.model.onAnswer } : {}),
      })
    : null;
  const gatewaySocket = join(keep, 'model.sock');
  await gateway?.listen(gatewaySocket);
  const proxy = new ContainProxy({ allow: opts.allow, gateway: gateway ? gatewaySocket : null });
  await proxy.listen(join(bridge, 'proxy.sock'));
  const hide = [
    ...new Set(
      [opts.env.HOME || homedir(), opts.env.RUNNER_TEMP].filter((h): h is string => Boolean(h)).map((h) => resolve(h)),
    ),
  ];
  const view: FsView = {
    base: { kind: 'system', roots: systemRoots() },
    hide,
    hideFiles: [],
    ro: [bridge, ...(opts.readOnly ?? []).map((d) => resolve(d))],
    rw: [resolve(opts.workspace), resolve(opts.home)],
  };
  view.ro.unshift(...neededDirs(view, opts.env.PATH));
  const plan: ContainPlan = {
    workspace: resolve(opts.workspace),
    view,
    bridge,
    proxyPort: PROXY_PORT,
    modelPort: gateway ? MODEL_PORT : null,
  };
  return {
    command: opts.bwrap ?? 'bwrap',
    args: bwrapArgs(plan, command, args),
    // The model's port on loopback is reached directly (the forwarder relays it to the gateway); every host through the proxy.
    env: proxyEnv(PROXY_PORT, gateway ? '127.0.0.1' : '', join(opts.home, '.yoke-forward-ready')),
    modelUrl: opts.model ? insideModelUrl(opts.model.upstream) : null,
    blocked: () => [...proxy.blocked],
    answers: () => [...(gateway?.answers ?? [])],
    refused: () => [...(gateway?.refused ?? [])],
    hidden: hide,
    probe: (command, env) => probeInside(plan, command, env, opts.bwrap ?? 'bwrap'),
    async close() {
      await proxy.close();
      await gateway?.close();
      rmSync(bridge, { recursive: true, force: true });
      rmSync(keep, { recursive: true, force: true });
    },
  };
}
