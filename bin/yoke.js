#!/usr/bin/env node
// The yoke CLI, run through tsx so the TypeScript sources need no build step.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const res = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), entry, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(res.status ?? 1);
