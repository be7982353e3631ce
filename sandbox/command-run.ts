import { join } from 'node:path';
import { bubblewrapProblem } from '../src/kernel/bubblewrap.js';

// What yoke's command launcher is given in the sandbox: the demo agent's
// command, with what a run needs that an Actions run gets from its runner set
// in the command itself, and where the run may write.

export function commandRunEnv(o: {
  /** The demo agent, bundled (bundles.ts): plain node starts it, from any working directory. */
  agent: string;
  forgeUrl: string;
  agentToken: string;
  gitDir: string;
  dataDir: string;
  failAgent: number;
  agentDelayMs: number;
}): Record<string, string> {
  const runEnv: Record<string, string> = {
    GITHUB_API_URL: `${o.forgeUrl}/api/v3`,
    GH_TOKEN: o.agentToken,
    YOKE_SANDBOX_GIT_URL: o.gitDir,
    YOKE_SANDBOX_STATE: join(o.dataDir, 'state'),
    YOKE_SANDBOX_FAIL_AGENT: String(o.failAgent),
    YOKE_SANDBOX_AGENT_DELAY_MS: String(o.agentDelayMs),
  };
  return {
    YOKE_COMMAND: `${Object.entries(runEnv)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(' ')} node ${JSON.stringify(o.agent)}`,
    // TR06: a run writes only its own folder and these: the demo's runs push to the forge's git folder and keep state.
    YOKE_COMMAND_WRITABLE: o.dataDir,
    // TR06: and reaches, besides the yoke it reports to, only the forge (GitHub, to a run on an operator's machine).
    YOKE_COMMAND_NETWORK_ALLOW: `127.0.0.1:${new URL(o.forgeUrl).port}`,
    // On a machine without bubblewrap the demo's runs go uncontained (an operator's yoke would refuse to start).
    ...(bubblewrapProblem() ? { YOKE_COMMANDS_UNCONTAINED: '1' } : {}),
  };
}
