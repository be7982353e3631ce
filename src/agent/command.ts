import { z } from 'zod';
import { jsonLine, type AgentAdapter, type AgentOutcome } from './clis/adapter.js';
import { tailOf } from './output.js';

// An agent of your own: `.github/yoke/run.sh`, read from the commit the
// workflow was dispatched on (never a PR's edit of it), run under the same
// containment as Claude Code and Codex. It works in the checkout and exits;
// the runner commits what it changed and the deliver job pushes it, so the
// script never holds a token that can push, report or open a PR.
//
// What it gets: the prompt in the file $YOKE_PROMPT_FILE (the same prompt the
// shipped agents get, everything someone else wrote fenced as data), the
// run's facts (YOKE_RUN_ID, YOKE_RUN_KIND, YOKE_SUBJECT, YOKE_HEAD_SHA,
// YOKE_MAX_TURNS, YOKE_MAX_USD), GITHUB_REPOSITORY, GITHUB_RUN_ID and
// GITHUB_RUN_NUMBER, and the secrets the workflow names in YOKE_AGENT_SECRETS.
// What it may print, one JSON object a line, besides anything else:
//   {"yoke":{"turn":true}}                       one model answer (counted against max_turns)
//   {"yoke":{"cost":{"usd":0.4,"input_tokens":1,"output_tokens":2}}}  the cost so far
//   {"yoke":{"message":"what I changed and why"}} its last word (else the end of its output)
// Exit 0 for done, anything else for failed.

export const RUN_SCRIPT_PATH = '.github/yoke/run.sh';
export const PROMPT_FILE = 'prompt.md';
const SCRIPT_FILE = 'run.sh';

const Report = z
  .object({
    yoke: z
      .object({
        turn: z.literal(true).optional(),
        message: z.string().max(20_000).optional(),
        cost: z
          .object({
            usd: z.number().min(0).nullable(),
            input_tokens: z.number().int().min(0).default(0),
            output_tokens: z.number().int().min(0).default(0),
          })
          .optional(),
      })
      .strict(),
  })
  .strict();
type Report = z.infer<typeof Report>['yoke'];

function reportOf(line: string): Report | null {
  const j = jsonLine(line);
  if (!j || !('yoke' in j)) return null;
  const r = Report.safeParse(j);
  return r.success ? r.data.yoke : null;
}

/** Names in YOKE_AGENT_SECRETS: variable names, comma- or space-separated. */
export function secretNames(list: string | undefined): { names: string[] } | { error: string } {
  const names = (list ?? '').split(/[\s,]+/).filter(Boolean);
  const bad = names.find((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(n) || /^(GITHUB|ACTIONS|RUNNER|YOKE)_/.test(n));
  if (bad)
    return {
      error: `YOKE_AGENT_SECRETS names ${JSON.stringify(bad)}, which is not a variable your agent's secret can be passed in (use a name like MY_MODEL_KEY; GITHUB_*, ACTIONS_*, RUNNER_* and YOKE_* stay with the runner)`,
    };
  return { names };
}

/** The facts of the run the script sees, besides its prompt file. */
const FACTS = [
  'YOKE_RUN_ID',
  'YOKE_RUN_KIND',
  'YOKE_SUBJECT',
  'YOKE_HEAD_SHA',
  'GITHUB_REPOSITORY',
  'GITHUB_RUN_ID',
  'GITHUB_RUN_NUMBER',
] as const;

export function commandAgent(script: string, secrets: readonly string[]): AgentAdapter {
  return {
    name: 'command',
    binary: 'bash',
    pkg: `your agent, in ${RUN_SCRIPT_PATH}`,
    credentials: secrets,
    passthrough: [],
    // yoke knows no vendor of it: its model is YOKE_AGENT_MODEL_URL (relayed, its own headers kept) or a host of agent.network.allow.
    modelUrlVariable: 'YOKE_AGENT_MODEL_URL',
    defaultModelUrl: null,
    modelApi: null,
    modelAuth: () => null,
    invocation(prompt, limits, home, env) {
      const facts: Record<string, string> = {};
      for (const name of FACTS) if (env[name]) facts[name] = env[name]!;
      return {
        args: [`${home}/${SCRIPT_FILE}`],
        env: {
          ...facts,
          YOKE_PROMPT_FILE: `${home}/${PROMPT_FILE}`,
          YOKE_MAX_TURNS: String(limits.maxTurns),
          YOKE_MAX_USD: limits.maxUsd === null ? '' : String(limits.maxUsd),
          ...(env.YOKE_AGENT_MODEL_URL ? { YOKE_AGENT_MODEL_URL: env.YOKE_AGENT_MODEL_URL } : {}),
        },
        files: { [PROMPT_FILE]: prompt, [SCRIPT_FILE]: script },
      };
    },
    parseLine(line) {
      const r = reportOf(line);
      if (!r) return null;
      return {
        ...(r.turn ? { turn: true } : {}),
        ...(r.message !== undefined ? { message: r.message } : {}),
        ...(r.cost ? { priced: true } : {}),
      };
    },
    outcome(stdout, exit): AgentOutcome {
      let message: string | null = null;
      let cost: AgentOutcome['cost'] = null;
      const plain: string[] = [];
      for (const line of stdout.split('\n')) {
        const r = reportOf(line);
        if (!r) {
          if (!jsonLine(line)) plain.push(line);
          continue;
        }
        if (r.message !== undefined) message = r.message;
        // TR37: the cost so far only grows; the highest stated is kept, so a line a tool prints cannot lower it.
        if (r.cost && (cost === null || (r.cost.usd ?? -1) >= (cost.usd ?? -1)))
          cost = {
            usd: r.cost.usd,
            inputTokens: r.cost.input_tokens,
            outputTokens: r.cost.output_tokens,
            note: r.cost.usd === null ? 'the agent gave no price' : null,
          };
      }
      const ok = exit.code === 0 && !exit.signal;
      const last = message ?? tailOf(plain.join('\n'), 1500);
      // Its own first line says why, where the dashboard shows one line.
      const said = (last.trim().split('\n')[0] ?? '').slice(0, 160).replace(/[.\s]+$/, '');
      const reason = ok
        ? null
        : `${exit.signal ? `${SCRIPT_FILE} was ended by ${exit.signal}` : `${SCRIPT_FILE} exited ${exit.code}`}${said ? `: ${said}` : ''}`;
      return { ok, reason, message: last, cost };
    },
  };
}
