import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { agentCliBin } from '../../src/sandbox/agent-clis.js';

// The real agent CLIs are installed outside `npm ci` (bash bin/install-agents);
// without them these tests skip with a message, and CI (YOKE_REQUIRE_AGENTS) requires them.

export function haveAgentClis(what: string): boolean {
  const missing = (['claude', 'codex'] as const).filter((b) => !agentCliBin(b));
  if (missing.length === 0) return true;
  const msg = `The ${what} are skipped: ${missing.join(' and ')} not installed. Run \`bash bin/install-agents\` to install the pinned CLIs.`;
  if (process.env.YOKE_REQUIRE_AGENTS) throw new Error(msg);
  console.warn(msg);
  return false;
}

/** A maker of temporary folders for one test file; they are removed after it. */
export function tempFolders(): (prefix: string) => string {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  return (prefix) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}
