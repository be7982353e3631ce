import { parse as parseYaml } from 'yaml';
import { parseDeliverySettings } from './delivery.js';
import { parsePlanFile, PLAN_EXTENSION } from './qa-plan.js';
import { CONFIG_PATH, parseRepoConfig } from './repo-config.js';

// `yoke config check`: the opt-in file and every QA plan of a checkout, read
// offline with the messages yoke itself gives (did-you-mean included), so a
// mistake is found before it is pushed. Pure: the files come in, findings out.

export interface CheckFiles {
  /** A file's text, or null when it is not there. */
  read(path: string): string | null;
  /** The files under a folder (recursively), as paths from the checkout's root. */
  list(dir: string): string[];
}

export interface Finding {
  file: string;
  ok: boolean;
  text: string;
}

/** Every finding for a checkout: the opt-in file, its delivery section, then each plan file. */
export function checkConfig(files: CheckFiles): Finding[] {
  const text = files.read(CONFIG_PATH);
  if (text === null)
    return [
      {
        file: CONFIG_PATH,
        ok: false,
        text: `${CONFIG_PATH} is not here: this checkout has not opted in to yoke (see the README for its fields)`,
      },
    ];
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    return [
      {
        file: CONFIG_PATH,
        ok: false,
        text: `${CONFIG_PATH} is not YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
      },
    ];
  }
  const cfg = parseRepoConfig(raw ?? {});
  const out: Finding[] = cfg.state === 'invalid' ? [{ file: CONFIG_PATH, ok: false, text: cfg.reason }] : [];
  const delivery = parseDeliverySettings('this repository', (raw as Record<string, unknown> | null)?.delivery);
  // The file is valid only when its delivery section is too: it is never "valid", then "refused".
  if (cfg.state !== 'invalid' && delivery.state !== 'refused')
    out.push({ file: CONFIG_PATH, ok: true, text: `${CONFIG_PATH} is valid` });
  if (delivery.state === 'refused') {
    out.push({
      file: CONFIG_PATH,
      ok: false,
      text: delivery.refusal.message.replace(
        'QA configuration of this repository is refused: ',
        'delivery is refused: ',
      ),
    });
    return out;
  }
  if (delivery.state === 'absent') return out;
  const dir = delivery.settings.plans_dir;
  const plans = files
    .list(dir)
    .filter((p) => PLAN_EXTENSION.test(p))
    .sort();
  if (plans.length === 0) out.push({ file: dir, ok: true, text: `${dir} has no QA plans` });
  for (const path of plans) {
    const r = parsePlanFile(dir, path, files.read(path) ?? '');
    out.push(
      r.ok
        ? {
            file: path,
            ok: true,
            text: `${path}: plan ${r.plan.id} (${r.plan.name}) is valid, ${r.plan.cases.length} case(s)`,
          }
        : { file: path, ok: false, text: r.detail },
    );
  }
  return out;
}
