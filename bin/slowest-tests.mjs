#!/usr/bin/env node
// Prints the ten slowest test files of a vitest JSON report (`--reporter=json --outputFile=F`), slowest first,
// and how long the files took together: where a test run's time goes.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const [file, count = '10'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bin/slowest-tests.mjs REPORT.json [COUNT]');
  process.exit(2);
}
const report = JSON.parse(readFileSync(file, 'utf8'));
const files = report.testResults.map((r) => ({
  name: relative(process.cwd(), r.name),
  s: (r.endTime - r.startTime) / 1000,
}));
files.sort((a, b) => b.s - a.s);
const total = files.reduce((t, f) => t + f.s, 0);
console.log(`test files: ${files.length}, ${total.toFixed(0)} s in files together; the ${count} slowest:`);
for (const f of files.slice(0, Number(count))) console.log(`${f.s.toFixed(1).padStart(7)} s  ${f.name}`);
