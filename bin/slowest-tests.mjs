#!/usr/bin/env node
// Prints the slowest test files of a vitest run, slowest first, and how long the files took together: where a
// test run's time goes. Reads vitest's results cache (node_modules/.vite/vitest/<hash>/results.json, written by
// every run: a file's whole time, its beforeAll hooks included, which is where an e2e file starts its sandbox),
// or, given a JSON report (`--reporter=json --outputFile=F`), the time from its first test to its last, hooks left out.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const CACHE = join('node_modules', '.vite', 'vitest');
const [given, count = '10'] = process.argv.slice(2);
const cached = () => {
  try {
    return readdirSync(CACHE).map((d) => join(CACHE, d, 'results.json'))[0];
  } catch {
    return undefined;
  }
};
const file = given && given !== '--cache' ? given : cached();
if (!file) {
  console.error('usage: node bin/slowest-tests.mjs [REPORT.json | --cache] [COUNT] (--cache: vitest results cache)');
  process.exit(2);
}
const data = JSON.parse(readFileSync(file, 'utf8'));
// The cache keys a file by project and path (`whole:test/x.test.ts`); keys with no project are left from runs
// before the config named its projects.
const named = (results) => (results.some(([k]) => !k.startsWith(':')) ? results.filter(([k]) => !k.startsWith(':')) : results);
const files = Array.isArray(data.results)
  ? named(data.results).map(([key, r]) => ({ name: key.replace(/^[^:]*:/, ''), s: r.duration / 1000 }))
  : data.testResults.map((r) => ({ name: relative(process.cwd(), r.name), s: (r.endTime - r.startTime) / 1000 }));
files.sort((a, b) => b.s - a.s);
const total = files.reduce((t, f) => t + f.s, 0);
console.log(`test files: ${files.length}, ${total.toFixed(0)} s in files together; the ${count} slowest:`);
for (const f of files.slice(0, Number(count))) console.log(`${f.s.toFixed(1).padStart(7)} s  ${f.name}`);
