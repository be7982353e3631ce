import { parseOperatorEnv, type OperatorSettings } from './env.js';

// How yoke resolves its operator settings at start: given outright (tests,
// the bench), or parsed from an environment with every problem named.

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`yoke cannot start; fix these settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function resolveSettings(from: {
  settings?: OperatorSettings;
  env?: Record<string, string | undefined>;
}): OperatorSettings {
  if (from.settings) return from.settings;
  const parsed = parseOperatorEnv(from.env ?? process.env);
  if (!parsed.ok) throw new SettingsError(parsed.problems);
  return parsed.settings;
}
