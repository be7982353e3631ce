import type { AgentAdapter, AgentName } from './adapter.js';
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { isOneOf, keysOf } from '../../kernel/guards.js';

export const AGENTS: Record<AgentName, AgentAdapter> = { 'claude-code': claudeCode, codex };

export function agentNamed(name: string | undefined): AgentAdapter | { error: string } {
  const known = Object.keys(AGENTS).join(' or ');
  if (!name) return { error: `YOKE_AGENT is not set: name the agent (${known})` };
  return isOneOf(keysOf(AGENTS), name)
    ? AGENTS[name]
    : { error: `YOKE_AGENT is ${JSON.stringify(name)}; yoke knows ${known}` };
}
