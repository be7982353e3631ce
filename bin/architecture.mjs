#!/usr/bin/env node
// `npm run architecture`: the rooms of src/ in docs/architecture.md, made from .dependency-cruiser.cjs (the
// fleet's rooms and what each may not import) and the folders as they are, so the picture cannot drift from
// the rules a test holds. `--check` says whether the page is current (test/structure.test.ts runs it).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
const PAGE = join(ROOT, 'docs/architecture.md');
const START = '<!-- rooms: made by `npm run architecture` from .dependency-cruiser.cjs; npm test keeps it current -->';
const END = '<!-- /rooms -->';

/** Each folder of src/ with the .ts files directly in it. */
function folders(dir = join(ROOT, 'src')) {
  const here = readdirSync(dir);
  const own = here.filter((n) => n.endsWith('.ts')).length;
  const subs = here.filter((n) => statSync(join(dir, n)).isDirectory()).sort();
  return [[relative(join(ROOT, 'src'), dir) || '.', own], ...subs.flatMap((s) => folders(join(dir, s)))];
}

/** The generated section: the fleet's rooms as a graph of what each may import, and every folder's size. */
export function roomsSection() {
  const { rooms } = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs'));
  const all = ['engine', ...Object.keys(rooms)];
  const arrows = [];
  for (const room of all) {
    const forbids = rooms[room]?.forbids ?? [];
    for (const to of all) if (to !== room && !forbids.includes(to)) arrows.push(`  ${room} --> ${to}`);
    arrows.push(`  ${room} --> root`);
  }
  const lines = [
    START,
    '',
    "The fleet's rooms (`src/fleet/<room>/`) and what each may import (code; a type may cross any line). Every room",
    "stands on `src/fleet`'s root (the context and the shared kinds: candidates, the cap, a repository's facts and",
    'state, stacks and the merge queue), which imports no room. Each missing arrow is a dependency-cruiser rule',
    '(`fleet-<room>-room`) with a planted violation in `test/fixtures/layers`.',
    '',
    '```mermaid',
    'flowchart TD',
    ...arrows,
    '```',
    '',
    '| room | may not import | why |',
    '|---|---|---|',
    ...Object.entries(rooms).map(([room, r]) => `| \`fleet/${room}/\` | ${r.forbids.map((f) => `\`${f}/\``).join(', ')} | ${r.why} |`),
    '| `fleet/engine/` | nothing | the engine queues passes and ticks, and drives every room |',
    '',
    'Every folder of `src/` and the `.ts` files directly in it (at most 20, 10 in `src/fleet`; migrations aside):',
    '',
    '| folder | files |',
    '|---|---|',
    ...folders().map(([dir, n]) => `| \`${dir === '.' ? 'src' : `src/${dir}`}/\` | ${n} |`),
    '',
    END,
  ];
  return lines.join('\n');
}

/** The page with its section made again. */
export function pageWithRooms(page = readFileSync(PAGE, 'utf8')) {
  const at = page.indexOf(START);
  const end = page.indexOf(END);
  if (at < 0 || end < 0) throw new Error(`${PAGE} has no rooms section (${START} … ${END})`);
  return `${page.slice(0, at)}${roomsSection()}${page.slice(end + END.length)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // `--check [PAGE]`: another copy of the page may be checked (the test's planted drift).
  const path = process.argv.find((a, i) => i > 1 && !a.startsWith('--')) ?? PAGE;
  const page = readFileSync(path, 'utf8');
  const made = pageWithRooms(page);
  if (process.argv.includes('--check')) {
    if (made !== page) {
      console.error(`${relative(ROOT, path)} is not current: run \`npm run architecture\`.`);
      process.exit(1);
    }
  } else writeFileSync(PAGE, made);
}
