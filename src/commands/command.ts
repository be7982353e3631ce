import { attachPlan } from '../delivery/gate/attach.js';
import { closest } from '../config/suggest.js';
import { repoStatus, requestFix, requestLand, requestStart, resetRepo, setAutoLoop } from '../fleet/runs/controls.js';
import { makeRefusal } from '../kernel/codes/table.js';
import { refused, type Result } from '../kernel/result.js';
import type { CommandAt } from './at.js';
import { asControl, declineByComment, waiveByComment } from './qa.js';

// Comment commands. A comment is a command when its first line starts with
// `/yoke`; anything else in it is ignored. Every command is declared once, in
// COMMANDS: how people type it (its usage lines, which the replies list in
// this order), how its first line is read, and what it does. parseComment,
// the usage list, the did-you-mean and the handling all come from it.

export const COMMENT_LIMIT = 10_000;

/** The first line of a `/yoke` comment, split: `/yoke <verb> <arg> <rest…>`, and the whole body. */
export interface CommandLine {
  verb: string | undefined;
  arg: string | undefined;
  rest: readonly string[];
  first: string;
  body: string;
}

interface CommandSpec<C extends { name: string }> {
  /** How people type it, one line per form. */
  usage: readonly string[];
  /** The command its line says, or null when the line is not this command. */
  parse(line: CommandLine): C | null;
  /** What it does, answered as a reply's text or a refusal. */
  run(at: CommandAt, cmd: C): Promise<Result<string>>;
}

const spec = <C extends { name: string }>(s: CommandSpec<C>): CommandSpec<C> => s;

/** What a writer wrote after `/yoke <verb>`: the rest of the first line and every line after it. */
function textAfter(body: string, verb: string): string {
  return body
    .trimStart()
    .replace(new RegExp(`^/yoke\\s+${verb}`), '')
    .trim();
}

/** Commands that act on an issue are refused on a pull request. */
const onIssue = (at: CommandAt, then: () => Promise<Result<string>>): Promise<Result<string>> =>
  at.comment.isPull
    ? Promise.resolve(
        refused(makeRefusal('issue_not_found', { repo: at.repo.fullName, number: at.comment.issueNumber })),
      )
    : then();

export const COMMANDS = {
  /** TR33: with instructions, the writer's text goes to the AFK run's prompt. */
  start: spec({
    usage: ['/yoke start', '/yoke start <instructions>'],
    parse: (l) =>
      l.verb !== 'start'
        ? null
        : l.arg === undefined && !textAfter(l.body, 'start')
          ? { name: 'start' as const }
          : { name: 'start' as const, text: textAfter(l.body, 'start') },
    run: (at, cmd: { name: 'start'; text?: string }) =>
      onIssue(at, () =>
        requestStart(at.ctx, at.repo.fullName, at.comment.issueNumber, {
          by: at.comment.author,
          instructions: cmd.text ? { text: cmd.text, commentId: at.comment.id } : null,
        }),
      ),
  }),
  /** TR33: on a claim PR, a fix run with the writer's instructions. */
  fix: spec({
    usage: ['/yoke fix <what to change>'],
    parse: (l) => (l.verb === 'fix' ? { name: 'fix' as const, text: textAfter(l.body, 'fix') } : null),
    run: (at, cmd) =>
      requestFix(at.ctx, at.repo.fullName, at.comment.issueNumber, {
        by: at.comment.author,
        instructions: { text: cmd.text, commentId: at.comment.id },
      }),
  }),
  land: spec({
    usage: ['/yoke land'],
    parse: (l) => (l.verb === 'land' && l.arg === undefined ? { name: 'land' as const } : null),
    run: (at) => requestLand(at.ctx, at.repo.fullName, at.comment.issueNumber, at.comment.author),
  }),
  auto: spec({
    usage: ['/yoke auto on', '/yoke auto off'],
    parse: (l) =>
      l.verb === 'auto' && (l.arg === 'on' || l.arg === 'off') && l.rest.length === 0
        ? { name: 'auto' as const, on: l.arg === 'on' }
        : null,
    run: (at, cmd) => setAutoLoop(at.ctx, at.repo.fullName, cmd.on),
  }),
  reset: spec({
    usage: ['/yoke reset'],
    parse: (l) => (l.verb === 'reset' && l.arg === undefined ? { name: 'reset' as const } : null),
    run: (at) => resetRepo(at.ctx, at.repo.fullName),
  }),
  status: spec({
    usage: ['/yoke status'],
    parse: (l) => (l.verb === 'status' && l.arg === undefined ? { name: 'status' as const } : null),
    run: (at) => repoStatus(at.ctx, at.repo.fullName),
  }),
  qa_attach: spec({
    usage: ['/yoke qa attach <plan>'],
    parse: (l) =>
      l.verb === 'qa' && l.arg === 'attach' && l.rest.length === 1
        ? { name: 'qa_attach' as const, ref: l.rest[0]! }
        : null,
    run: (at, cmd) =>
      onIssue(at, () =>
        attachPlan(
          at.ctx,
          { repo: at.repo, issue: at.comment.issueNumber },
          { ref: cmd.ref, by: at.comment.author, source: 'command' },
        ).then(asControl),
      ),
  }),
  qa_decline: spec({
    usage: ['/yoke qa decline'],
    parse: (l) =>
      l.verb === 'qa' && l.arg === 'decline' && l.rest.length === 0 ? { name: 'qa_decline' as const } : null,
    run: (at) => declineByComment(at.ctx, at.repo, at.comment),
  }),
  qa_waive: spec({
    usage: ['/yoke qa waive <case> [--plan PLAN] --reason "why"'],
    parse: (l) => {
      if (l.verb !== 'qa' || l.arg !== 'waive') return null;
      const m = /^\/yoke\s+qa\s+waive\s+(\S+)(?:\s+--plan\s+(\S+))?\s+--reason\s+"([^"]+)"\s*$/.exec(l.first);
      return m ? { name: 'qa_waive' as const, case: m[1]!, ...(m[2] ? { plan: m[2] } : {}), reason: m[3]! } : null;
    },
    run: (at, cmd) => waiveByComment(at, cmd),
  }),
};

type Commands = typeof COMMANDS;
/** A command as read from its comment. */
export type CommandWord = { [N in keyof Commands]: NonNullable<ReturnType<Commands[N]['parse']>> }[keyof Commands];

/** Runs a command by its table entry: the one place a command's name meets its handler's type. */
export function runCommand(at: CommandAt, cmd: CommandWord): Promise<Result<string>> {
  const entry: CommandSpec<CommandWord> = COMMANDS[cmd.name] as CommandSpec<never>;
  return entry.run(at, cmd);
}

export type ParsedComment =
  | { kind: 'none' }
  | { kind: 'command'; command: CommandWord }
  | { kind: 'unknown'; text: string }
  | { kind: 'too_large' };

export function parseComment(body: string): ParsedComment {
  const first = body.trimStart().split(/\r?\n/, 1)[0]?.trim() ?? '';
  if (!/^\/yoke(\s|$)/.test(first)) return { kind: 'none' };
  if (body.length > COMMENT_LIMIT) return { kind: 'too_large' };
  const [verb, arg, ...rest] = first.split(/\s+/).slice(1);
  const line: CommandLine = { verb, arg, rest, first, body };
  for (const entry of Object.values(COMMANDS) as CommandSpec<CommandWord>[]) {
    const command = entry.parse(line);
    if (command) return { kind: 'command', command };
  }
  return { kind: 'unknown', text: first.slice(0, 80) };
}

/** Every command as people type it, in the order the replies list them. */
export const COMMAND_USAGE: readonly string[] = Object.values(COMMANDS).flatMap((c) => c.usage);

/**
 * The command an unknown one is most likely a typo of (`/yoke stat` →
 * `/yoke status`): a word that starts exactly one command's word, else the
 * nearest within a typo's distance; null when none is near.
 */
export function suggestCommand(text: string): string | null {
  const [verb, arg] = text.split(/\s+/).slice(1);
  if (!verb) return null;
  const verbs = [...new Set(COMMAND_USAGE.map((u) => u.split(' ')[1]!))];
  if (verbs.includes(verb)) {
    if (verb === 'qa' && arg) {
      const sub = COMMAND_USAGE.filter((u) => u.startsWith('/yoke qa ')).map((u) => u.split(' ')[2]!);
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
