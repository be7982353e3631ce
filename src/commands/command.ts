import { z } from 'zod';
import { closest } from '../config/suggest.js';

// Comment commands. A comment is a command when its first line starts with
// `/yoke`; anything else in it is ignored.

export const COMMENT_LIMIT = 10_000;

export const CommandWord = z.discriminatedUnion('name', [
  /** TR33: with instructions, the writer's text goes to the AFK run's prompt. */
  z.object({ name: z.literal('start'), text: z.string().optional() }),
  /** TR33: on a claim PR, a fix run with the writer's instructions. */
  z.object({ name: z.literal('fix'), text: z.string() }),
  z.object({ name: z.literal('land') }),
  z.object({ name: z.literal('auto'), on: z.boolean() }),
  z.object({ name: z.literal('reset') }),
  z.object({ name: z.literal('status') }),
  z.object({ name: z.literal('qa_attach'), ref: z.string().min(1).max(200) }),
  z.object({ name: z.literal('qa_decline') }),
  z.object({
    name: z.literal('qa_waive'),
    case: z.string().min(1).max(64),
    plan: z.string().min(1).max(200).optional(),
    reason: z.string().min(1).max(2000),
  }),
]);
export type CommandWord = z.infer<typeof CommandWord>;

export type ParsedComment =
  | { kind: 'none' }
  | { kind: 'command'; command: CommandWord }
  | { kind: 'unknown'; text: string }
  | { kind: 'too_large' };

/** What a writer wrote after `/yoke <verb>`: the rest of the first line and every line after it. */
function textAfter(body: string, verb: string): string {
  return body
    .trimStart()
    .replace(new RegExp(`^/yoke\\s+${verb}`), '')
    .trim();
}

export function parseComment(body: string): ParsedComment {
  const first = body.trimStart().split(/\r?\n/, 1)[0]?.trim() ?? '';
  if (!/^\/yoke(\s|$)/.test(first)) return { kind: 'none' };
  if (body.length > COMMENT_LIMIT) return { kind: 'too_large' };
  const words = first.split(/\s+/).slice(1);
  const [verb, arg, ...rest] = words;
  const text = first.slice(0, 80);
  if (verb === 'start' && arg === undefined && !textAfter(body, 'start'))
    return { kind: 'command', command: { name: 'start' } };
  if (verb === 'start') return { kind: 'command', command: { name: 'start', text: textAfter(body, 'start') } };
  if (verb === 'fix') return { kind: 'command', command: { name: 'fix', text: textAfter(body, 'fix') } };
  if (verb === 'land' && arg === undefined) return { kind: 'command', command: { name: 'land' } };
  if (verb === 'reset' && arg === undefined) return { kind: 'command', command: { name: 'reset' } };
  if (verb === 'status' && arg === undefined) return { kind: 'command', command: { name: 'status' } };
  if (verb === 'qa' && arg === 'decline' && rest.length === 0)
    return { kind: 'command', command: { name: 'qa_decline' } };
  if (verb === 'qa' && arg === 'attach' && rest.length === 1)
    return { kind: 'command', command: { name: 'qa_attach', ref: rest[0]! } };
  if (verb === 'qa' && arg === 'waive') {
    // /yoke qa waive <case> [--plan PLAN] --reason "why"
    const m = /^\/yoke\s+qa\s+waive\s+(\S+)(?:\s+--plan\s+(\S+))?\s+--reason\s+"([^"]+)"\s*$/.exec(first);
    if (m)
      return {
        kind: 'command',
        command: { name: 'qa_waive', case: m[1]!, ...(m[2] ? { plan: m[2] } : {}), reason: m[3]! },
      };
  }
  if (verb === 'auto' && (arg === 'on' || arg === 'off') && rest.length === 0) {
    return { kind: 'command', command: { name: 'auto', on: arg === 'on' } };
  }
  return { kind: 'unknown', text };
}

/** Every command as people type it, in the order the replies list them. */
export const COMMAND_USAGE = [
  '/yoke start',
  '/yoke start <instructions>',
  '/yoke fix <what to change>',
  '/yoke land',
  '/yoke auto on',
  '/yoke auto off',
  '/yoke reset',
  '/yoke status',
  '/yoke qa attach <plan>',
  '/yoke qa decline',
  '/yoke qa waive <case> [--plan PLAN] --reason "why"',
] as const;

/**
 * The command an unknown one is most likely a typo of (`/yoke stat` →
 * `/yoke status`): a word that starts exactly one command's word, else the
 * nearest within a typo's distance; null when none is near.
 */
export function suggestCommand(text: string): string | null {
  const [verb, arg] = text.split(/\s+/).slice(1);
  if (!verb) return null;
  const verbs = ['start', 'fix', 'land', 'auto', 'reset', 'status', 'qa'];
  if (verbs.includes(verb)) {
    if (verb === 'qa' && arg) {
      const sub = ['attach', 'decline', 'waive'];
      const near =
        sub.filter((w) => w.startsWith(arg)).length === 1 ? sub.find((w) => w.startsWith(arg))! : closest(arg, sub);
      return near && near !== arg ? COMMAND_USAGE.find((u) => u.startsWith(`/yoke qa ${near}`))! : null;
    }
    return null;
  }
  const prefixed = verbs.filter((w) => verb.length >= 2 && w.startsWith(verb));
  const near = prefixed.length === 1 ? prefixed[0]! : closest(verb, verbs);
  if (!near) return null;
  return near === 'qa' ? null : COMMAND_USAGE.find((u) => u === `/yoke ${near}` || u.startsWith(`/yoke ${near} `))!;
}
