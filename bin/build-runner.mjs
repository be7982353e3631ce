#!/usr/bin/env node
// Part of `npm run build`: writes the runner a workflow job fetches
// (GET /yoke/runner.mjs) next to the compiled agent code, so the package
// ships it built and its users need no bundler (src/agent/bundle.ts).
import { writeFileSync } from 'node:fs';
import { BUILT_RUNNER, buildRunnerBundle } from '../dist/agent/bundle.js';

const { code, sha256 } = await buildRunnerBundle();
writeFileSync(BUILT_RUNNER, code);
console.log(`wrote ${BUILT_RUNNER} (sha256 ${sha256})`);
