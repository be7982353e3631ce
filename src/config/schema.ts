import { z } from 'zod';
import { DeliverySettings } from './delivery.js';
import { QaPlanFile } from './qa-plan.js';
import { RepoConfig } from './repo-config.js';
import { fieldOf, recordOf } from '../kernel/guards.js';

// JSON schemas of the opt-in file and of a QA plan, made from the zod schemas
// yoke parses them with, so an editor completes and checks what yoke will
// read (`yoke config schema`, and the file `yoke init` writes next to
// .github/yoke.yml). yoke's own check stays the word: the schema cannot say
// what depends on more than one file (a plan a stage names, say).

/** Where `yoke init` writes the opt-in file's schema, and how the file names it (relative to .github/yoke.yml). */
export const SCHEMA_PATH = '.github/yoke/yoke.schema.json';
export const SCHEMA_MODELINE = '# yaml-language-server: $schema=yoke/yoke.schema.json';

type Json = Record<string, unknown>;

const jsonOf = (schema: z.ZodType, title: string): Json => ({
  ...z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }),
  title,
});

/** `.github/yoke.yml`: every key of the engine, with `delivery:` as the delivery half reads it. */
export function optInJsonSchema(): Json {
  const engine = jsonOf(RepoConfig, "yoke's opt-in file (.github/yoke.yml)");
  const { $schema: _schema, ...delivery } = z.toJSONSchema(DeliverySettings, { io: 'input', unrepresentable: 'any' });
  const properties = recordOf(engine.properties) ?? {};
  return {
    ...engine,
    properties: { ...properties, delivery: { ...delivery, description: fieldOf(properties.delivery, 'description') } },
  };
}

/** A QA plan file under the plans folder (`.github/yoke/qa/*.yml` by default). */
export function planJsonSchema(): Json {
  return jsonOf(QaPlanFile, 'a yoke QA plan');
}
