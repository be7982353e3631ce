import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

// yoke's app.yml: the GitHub App it asks to be, its permissions and the
// events it receives. Read from yoke's own files (a checkout's or the
// package's), never from the working directory: the setup page registers the
// app from it, and `yoke doctor` compares an installation's grants with it.

export const AppYml = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  url: z.string().optional(),
  public: z.boolean().optional(),
  default_events: z.array(z.string()),
  default_permissions: z.record(z.string(), z.string()),
});
export type AppYml = z.infer<typeof AppYml>;

export const parseAppYml = (text: string): AppYml => AppYml.parse(parseYaml(text));

/** The text of the app.yml yoke ships, two folders up from src/config or dist/config. */
export const readShippedAppYml = (): string => readFileSync(new URL('../../app.yml', import.meta.url), 'utf8');
