import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMAND_PROXY_PORT, type CommandNetworkAllow } from '../../config/setting-parsers.js';
import { ContainProxy, forwardPrelude, proxyEnv, type BlockedAttempt, type Forward } from './contain-proxy.js';
import { FORWARDER } from './forwarder.js';

// TR06 TR30: the network of a command yoke runs outside an agent's sandbox
// (a command-launcher run, a repository's QA case or deploy command). It gets
// a network namespace of its own, so nothing on the machine's loopback (yoke's
// other listeners, a metrics port without a token, a database), no abstract
// socket (an X server's) and no cloud metadata is in reach; what it may reach
// comes in as the agent's does: a forwarder inside relays the loopback ports
// the operator names, the yoke API it reports to, and a proxy port for the
// hosts the operator allows, to the proxy outside, which checks each.

/** Where a command's sandbox notes that its forwarder listens (its /tmp is its own). */
const READY = '/tmp/.yoke-forward-ready';

export interface CommandNetwork {
  /** The folder the sandbox must show read-only: the forwarder's script and the proxy's socket. */
  bridge: string;
  /** The shell that starts the forwarder before the command. */
  prelude: string;
  /** Variables the command gets: the proxy, for programs that honour it. */
  env: Record<string, string>;
  /** Connections it tried that nothing allows: where to, and which command tried. */
  blocked(): BlockedAttempt[];
  close(): Promise<void>;
}

/** What a refused command's connection is told, naming the setting. */
export const commandRefusal = (host: string): string =>
  `yoke does not let this command reach ${host}: add it to YOKE_COMMAND_NETWORK_ALLOW where yoke (or the CLI) runs if the command needs it.`;

/** Starts the proxy a command's sandbox reaches the network through; `also` adds loopback ports (the yoke API). */
export async function startCommandNetwork(
  allow: Extract<CommandNetworkAllow, { kind: 'own' }>,
  also: readonly number[] = [],
): Promise<CommandNetwork> {
  const bridge = mkdtempSync(join(tmpdir(), 'yoke-net-'));
  chmodSync(bridge, 0o755);
  writeFileSync(join(bridge, 'forward.cjs'), FORWARDER);
  const loopback = [...new Set([...allow.loopback, ...also])].filter((p) => p !== COMMAND_PROXY_PORT);
  const proxy = new ContainProxy({ allow: allow.hosts, gateway: null, loopback, refusal: commandRefusal });
  await proxy.listen(join(bridge, 'proxy.sock'));
  const forwards: Forward[] = [`proxy:${COMMAND_PROXY_PORT}`, ...loopback.map((p) => `loop:${p}` as const)];
  return {
    bridge,
    prelude: forwardPrelude(bridge, forwards),
    // Loopback goes direct (the forwarder relays each allowed port); every host through the proxy.
    env: proxyEnv(COMMAND_PROXY_PORT, '127.0.0.1,localhost,::1', READY),
    blocked: () => [...proxy.blocked],
    async close() {
      await proxy.close();
      rmSync(bridge, { recursive: true, force: true });
    },
  };
}

/** What a command's refused connections come to, as one line each for its output or yoke's log. */
export function blockedLines(blocked: readonly BlockedAttempt[]): string[] {
  return blocked.map(
    (b) => `yoke refused ${b.host} to \`${b.command}\`: add it to YOKE_COMMAND_NETWORK_ALLOW if it needs it`,
  );
}
