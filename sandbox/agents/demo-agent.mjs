// The sandbox's demo agent behind templates/yoke-run.yml: an agent of your
// own (.github/yoke/run.sh) in miniature. yoke's runner starts it contained,
// in the checkout, with the prompt in $YOKE_PROMPT_FILE. It writes its change
// and exits; the runner commits it, the deliver job pushes it and yoke opens
// the claim PR. It holds no token and reaches no host.
// The sandbox writes it into the demo's run.sh after `const DEMO = {…}`: the
// tasks, how many of the first runs of the workflow fail (--fail-agent) and
// how long each AFK run takes.
/* global DEMO */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const env = process.env;
const say = (yoke) => console.log(JSON.stringify({ yoke }));
const prompt = readFileSync(env.YOKE_PROMPT_FILE, 'utf8');
const name = /demo-task: ([\w-]+)/.exec(prompt)?.[1];
const task = DEMO.tasks.find((t) => t.name === name);
if (!task) {
  say({ message: `Issue ${(env.YOKE_SUBJECT ?? '').replace('issue', '')} names no demo task.` });
  process.exit(1);
}
const fix = env.YOKE_RUN_KIND === 'fix';
// TR33: a fix that people with write access asked for gets the task's revision, not its repair.
const asked = fix && task.review && /You are changing pull request/.test(prompt);
if (!fix && DEMO.delayMs) await new Promise((r) => setTimeout(r, DEMO.delayMs));
// --fail-agent N: the first N runs of the workflow are AFK runs (nothing else has a PR yet), and they fail.
if (!fix && Number(env.GITHUB_RUN_NUMBER) <= DEMO.failFirst) {
  say({ message: 'The demo agent was told to fail (--fail-agent).' });
  process.exit(1);
}
say({ turn: true });
const write = (file, text) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
};
write(`lib/${task.name}.js`, asked ? task.review.impl : fix ? task.impl : (task.broken ?? task.impl));
write(`test/${task.name}.test.js`, asked ? task.review.test : task.test);
if (!fix) for (const [file, text] of Object.entries(task.extraFiles ?? {})) write(file, text);
// LD02: the task's migration, numbered 002; a repair renumbers it to 003 (another PR's 002 landed first).
if (task.migration && !asked) {
  if (fix) rmSync(`migrations/002-${task.name}.sql`, { force: true });
  write(`migrations/${fix ? '003' : '002'}-${task.name}.sql`, task.migration);
}
// What a metered model would bill for the work: a fixed price per kind.
say({ cost: fix ? { usd: 0.17, input_tokens: 7500, output_tokens: 900 } : { usd: 0.42, input_tokens: 18000, output_tokens: 2400 } });
say({
  message: asked
    ? `Made the changes the review asked for in lib/${task.name}.js and its test.`
    : fix
      ? `Fixed lib/${task.name}.js after the lander's reject.`
      : `Added lib/${task.name}.js and its test.`,
});
