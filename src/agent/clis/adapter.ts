// One coding-agent CLI behind one small interface: how to start it headless
// within the run's limits, how to read its event stream, and what it cost.
// A third agent (Aider, OpenHands) is one more file like claude-code.ts.

import type { ModelApi } from '../contain/model-answers.js';
import type { ModelAuth } from '../contain/model-gateway.js';
import { recordOf } from '../../kernel/guards.js';

export interface AgentLimits {
  /** The runner stops the agent past this many turns (model round trips). */
  maxTurns: number;
  /** The spend limit in US dollars, or null for none. */
  maxUsd: number | null;
}

export interface AgentCost {
  usd: number | null;
  inputTokens: number;
  outputTokens: number;
  /** Why there is no price, when usd is null (an unknown model, say). */
  note: string | null;
}

/** What an agent's run came to, as its own output says. */
export interface AgentOutcome {
  ok: boolean;
  /** Why it failed, in the agent's terms (`error_max_budget_usd`, `turn.failed`, …), or null. */
  reason: string | null;
  /** The agent's own last message. */
  message: string;
  cost: AgentCost | null;
}

/** What the runner reads of one line of the agent's output. */
export interface AgentEvent {
  /** A model turn ended (the runner counts these against maxTurns). */
  turn?: boolean;
  /** The model answer it belongs to: events of one answer (one per content block) are one turn. */
  turnId?: string;
  /** A message of the agent's, the newest of which is its last word. */
  message?: string;
  /** The cost so far is known now (an agent without a spend limit of its own has it checked here). */
  priced?: boolean;
}

export interface AgentInvocation {
  args: string[];
  /** Variables the agent's process gets beyond the allowlist and its credentials. */
  env: Record<string, string>;
  /** Files to write before it starts (its config), relative to its private home. */
  files?: Record<string, string>;
}

export interface AgentAdapter {
  /** A shipped agent's name, or `command` for an agent of your own (.github/yoke/run.sh). */
  readonly name: AgentName | 'command';
  /** The command on PATH. */
  readonly binary: string;
  /** The npm package and version the templates install and the tests pin. */
  readonly pkg: string;
  /** Credential variables the agent reads; one of them must be set (an agent of your own may need none). */
  readonly credentials: readonly string[];
  /** Other variables of the job the agent may see (its API base URL, say). */
  readonly passthrough: readonly string[];
  /** The variable that points it at its model's endpoint: contained, the runner points it at the model gateway (TR39). */
  readonly modelUrlVariable: string;
  /** Its model's endpoint when the job names none, or null (an agent of your own names its own). */
  readonly defaultModelUrl: string | null;
  /** How its model's answers state what they billed, for the gateway to count; null: yoke reads nothing of them. */
  readonly modelApi: ModelApi | null;
  /**
   * TR39: the header the gateway puts on each request for the key the job holds, and the placeholders the CLI
   * gets in its place; null when the agent keeps its own credentials (an agent of your own).
   */
  modelAuth(env: Record<string, string | undefined>): { auth: ModelAuth; placeholders: Record<string, string> } | null;
  invocation(
    prompt: string,
    limits: AgentLimits,
    home: string,
    env: Record<string, string | undefined>,
  ): AgentInvocation;
  parseLine(line: string): AgentEvent | null;
  /** The outcome from everything it printed and how it exited. */
  outcome(
    stdout: string,
    exit: { code: number | null; signal: string | null },
    env: Record<string, string | undefined>,
  ): AgentOutcome;
}

export type AgentName = 'claude-code' | 'codex';

/** Parses a line of JSON, or null. */
export function jsonLine(line: string): Record<string, unknown> | null {
  const t = line.trim();
  if (!t.startsWith('{')) return null;
  try {
    return recordOf(JSON.parse(t));
  } catch {
    return null;
  }
}
