#!/usr/bin/env node
// The yoke CLI. Installed from the package, it runs the compiled JavaScript
// (dist/); in a checkout that has not been built, the TypeScript sources
// through tsx, so working on yoke needs no build step.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
const sources = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
if (existsSync(compiled) && !existsSync(sources)) {
  const { main } = await import(compiled.href);
  await main(process.argv.slice(2));
} else {
  // Ctrl-C reaches the child too (one process group): wait for it to stop and say so, instead of leaving first.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => {});
  const res = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), sources, ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  process.exit(res.status ?? 1);
}
