// The files the agent CLIs read from a checkout as their own settings and
// instructions, taken from their own documentation: Claude Code's CLAUDE.md
// and CLAUDE.local.md at any depth, its .claude/ folder (settings with hooks,
// env and apiKeyHelper, commands, agents, skills) and .mcp.json; Codex's
// AGENTS.override.md (read before AGENTS.md) and AGENTS.md at any depth, its
// .codex/ folder and the .agents/ folder its skills live in. Declared once:
// they are protected paths (TR14), swapped for the default branch's in a fix
// run (TR23), and no symlink may stand at or under them (TR36).

export const AGENT_SETTINGS: readonly string[] = [
  '**/CLAUDE.md',
  '**/CLAUDE.local.md',
  '**/AGENTS.md',
  '**/AGENTS.override.md',
  '.claude/**',
  '.mcp.json',
  '.codex/**',
  '.agents/**',
];

/**
 * The globs that also guard the folder a `X/**` glob names, as a file: a symlink `.claude` pointing at a
 * folder of settings is `.claude` itself, which `.claude/**` alone would not match.
 */
export function withFolders(globs: readonly string[]): string[] {
  return [...new Set(globs.flatMap((g) => (g.endsWith('/**') && g.length > 3 ? [g, g.slice(0, -3)] : [g])))];
}

/** What a change never touches without a person (TR14), whatever the repository adds: yoke's own files and the agents' settings. */
export const ALWAYS_PROTECTED: readonly string[] = ['.github/**', ...AGENT_SETTINGS];
