import type { DemoTask } from './demo-repo.js';
import type { ScriptedModel } from './models/scripted-model.js';

// What a sandbox is started with: `npm run sandbox`'s flags and the tests' settings.

export interface SandboxOptions {
  launcher: 'actions' | 'command';
  /**
   * With `github`, runs reach yoke through the forge alone (YOKE_RUNS_REACH=github):
   * they are told no URL of yoke's, and the forge sends yoke no webhook, so
   * yoke learns everything by polling, as one hosted with outbound HTTPS only.
   */
  runsReach?: 'api' | 'github';
  /** Two yoke processes on a PostgreSQL started here: webhooks go to this one, run reports to the other. */
  postgres?: boolean;
  failAgent: number;
  dataDir?: string;
  tickSeconds?: number;
  reaperSeconds?: number;
  logLevel?: string;
  /** How many of the demo issues to open (all five by default). */
  issues?: number;
  /** Makes each AFK run take this much longer (to catch one live). */
  agentDelayMs?: number;
  /** Keep every response the forge serves, from its first (for the conformance test). */
  recordResponses?: boolean;
  /** The issues to open instead of the demo's (the attack suite adds its own). */
  tasks?: DemoTask[];
  /** Files of the demo repository to replace (the attack suite turns fix-forward off, say). */
  files?: Record<string, string>;
  /** yoke's own settings to change (YOKE_IDLE_PROBE_SECONDS, say). */
  env?: Record<string, string>;
  /** A real agent CLI instead of the demo agent, through its shipped workflow and a scripted model. */
  agent?: 'claude-code' | 'codex';
  /** The scripted model the agent talks to (the demo's by default). */
  model?: ScriptedModel;
  /**
   * Where yoke's log goes: the console (`npm run sandbox`), or kept in
   * `logged` (the default: a test that provokes a warning asserts on it, and a
   * passing run prints none).
   */
  log?: 'console' | 'capture';
}
