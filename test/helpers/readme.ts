import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

// The README as test/readme.test.ts checks its shell blocks, and the demo's story as the README and
// docs/sandbox.md tell it, which the demo's end table must show (test/http/dashboard.browser.test.ts runs the
// README's first command).

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const README = readFileSync(resolve(ROOT, 'README.md'), 'utf8');

export interface ShellBlock {
  marker: { runsIn: string[] } | { notRun: string } | null;
  commands: string[];
}

/** The README's ```sh blocks, each with the marker on the line before it and its commands (comments and exports left out). */
export function shellBlocks(text: string): ShellBlock[] {
  return [...text.matchAll(/(?:<!-- (runs in|not run): ([^\n]*?) -->\n)?```sh\n([\s\S]*?)```/g)].map((m) => ({
    marker: !m[1] ? null : m[1] === 'runs in' ? { runsIn: m[2]!.split(',').map((f) => f.trim()) } : { notRun: m[2]! },
    commands: m[3]!
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter((l) => l && !l.startsWith('#') && !l.startsWith('export '))
      .flatMap((l) => l.split('&&').map((c) => c.trim())),
  }));
}

/** Whether a file runs a command: a yoke command by its subcommand (`'doctor'`), anything else as written. */
export function runsCommand(fileText: string, command: string): boolean {
  const words = command.split(/\s+/);
  if (words[0] === 'yoke') return fileText.includes(`'${words[1]}'`) || fileText.includes(`yoke ${words[1]}`);
  return fileText.includes(command);
}

/** The demo's story as the README and docs/sandbox.md tell it, each sentence with what the end table must show for it. */
export const DEMO_STORY: { page: string; says: string; shows: RegExp }[] = [
  {
    page: 'docs/sandbox.md',
    says: 'For #3 its first attempt breaks the test, so the lander rejects it and a fix run repairs it.',
    shows:
      /^#3 .*: merged as .*\n {3}runs {7}afk_auto:success lander:rejected fix\[lander rejection\]:success lander:accepted$/m,
  },
  {
    page: 'docs/sandbox.md',
    says: "#2 lands first; #5 is judged on a base that already holds #2's migration and rejected (two migrations 002); its fix renumbers its migration to 003, a lander accepts it on the new base, and it lands",
    shows:
      /^#2 .*: merged as .*\n {3}runs {7}afk_auto:success lander:accepted\n(?:.*\n)*?#5 .*: merged as .*\n {3}runs {7}afk_auto:success (?:lander:accepted )?lander:rejected fix\[lander rejection\]:success lander:accepted$/m,
  },
  {
    page: 'README.md',
    says: "(#3 and #5 are rejected and fixed first, and #4 gets a maintainer's review fixed)",
    shows: /^#4 .*\n {3}runs {7}afk_auto:success lander:accepted fix\[review by @maintainer\]:success/m,
  },
];
