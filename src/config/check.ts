import { parse as parseYaml } from 'yaml';
import { parseDeliverySettings, type DeliverySettings } from './delivery.js';
import { parsePlanFile, planIdOf, PLAN_EXTENSION, resolveRunPlans, type QaPlan } from './qa-plan.js';
import { CONFIG_PATH, parseRepoConfig } from './repo-config.js';
import { fieldOf } from '../kernel/guards.js';

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
  /** ok; note: yoke takes it, but it may not do what was meant; refused: yoke would refuse it. */
  level: 'ok' | 'note' | 'refused';
  text: string;
}

/** YAML's complaint, and the line it is about with a caret under the place (the parser's own text ends at "column N:"). */
function yamlProblem(err: unknown, text: string): string {
  const first = (err instanceof Error ? err.message.split('\n')[0]! : String(err)).replace(/:$/, '');
  const pos = fieldOf(err, 'linePos');
  const at: unknown = Array.isArray(pos) ? pos[0] : undefined;
  const line = Number(fieldOf(at, 'line'));
  const col = Number(fieldOf(at, 'col'));
  const source = text.split('\n')[line - 1];
  if (!Number.isInteger(line) || source === undefined) return first;
  return `${first}\n    ${line} | ${source}\n    ${' '.repeat(String(line).length)} | ${' '.repeat(Math.max(0, col - 1))}^`;
}

/** Every finding for a checkout: the opt-in file, its delivery section, then each plan file. */
export function checkConfig(files: CheckFiles): Finding[] {
  const text = files.read(CONFIG_PATH);
  if (text === null)
    return [
      {
        file: CONFIG_PATH,
        level: 'refused',
        text: `${CONFIG_PATH} is not here: this checkout has not opted in to yoke (\`yoke init --agent claude-code\` writes one; docs/configuration.md lists its fields)`,
      },
    ];
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    return [{ file: CONFIG_PATH, level: 'refused', text: `${CONFIG_PATH} is not YAML: ${yamlProblem(err, text)}` }];
  }
  const cfg = parseRepoConfig(raw ?? {});
  const delivery = parseDeliverySettings('this repository', fieldOf(raw, 'delivery'));
  const fileFindings: Finding[] =
    cfg.state === 'invalid' ? [{ file: CONFIG_PATH, level: 'refused', text: cfg.reason }] : [];
  if (delivery.state === 'refused')
    fileFindings.push({
      file: CONFIG_PATH,
      level: 'refused',
      text: delivery.refusal.message.replace(
        'QA configuration of this repository is refused: ',
        'delivery is refused: ',
      ),
    });
  const planFindings: Finding[] = [];
  if (delivery.state === 'valid') {
    const dir = delivery.settings.plans_dir;
    const paths = files
      .list(dir)
      .filter((p) => PLAN_EXTENSION.test(p))
      .sort();
    if (paths.length === 0) planFindings.push({ file: dir, level: 'ok', text: `${dir} has no QA plans` });
    const plans: QaPlan[] = [];
    const unparsed: string[] = [];
    for (const path of paths) {
      const r = parsePlanFile(dir, path, files.read(path) ?? '');
      if (r.ok) plans.push(r.plan);
      else unparsed.push(planIdOf(dir, path) ?? path);
      planFindings.push(
        r.ok
          ? {
              file: path,
              level: 'ok',
              text: `${path}: plan ${r.plan.id} (${r.plan.name}) is valid, ${r.plan.cases.length} case(s)`,
            }
          : { file: path, level: 'refused', text: r.detail },
      );
    }
    fileFindings.push(...deliveryFindings(delivery.settings, plans, unparsed));
  }
  // The file is valid only when nothing of it is refused: it is never "valid", then "refused".
  const empty = raw === null || raw === undefined;
  const valid: Finding[] = fileFindings.some((f) => f.level === 'refused')
    ? []
    : [
        {
          file: CONFIG_PATH,
          level: 'ok',
          text: `${CONFIG_PATH} is valid${empty ? ' (it is empty: every field takes its default, as docs/configuration.md lists them)' : ''}`,
        },
      ];
  return [...valid, ...fileFindings, ...planFindings];
}

/** What a stage's entry would refuse of the run-level plans (read as it reads them), and the QA stages that may check nothing. */
function deliveryFindings(
  settings: DeliverySettings,
  plans: readonly QaPlan[],
  unparsed: readonly string[],
): Finding[] {
  const out: Finding[] = [];
  const runPlans = resolveRunPlans(settings.run_plans, plans, { plansDir: settings.plans_dir, at: '', unparsed });
  if (!runPlans.ok)
    out.push({
      file: CONFIG_PATH,
      level: 'refused',
      text: `delivery is refused: delivery.run_plans: ${runPlans.detail}`,
    });
  if (settings.run_plans.length === 0)
    for (const stage of settings.stages)
      // Unsaid only: `allow_empty: false` is the choice to stop there, made knowingly (yoke init --delivery writes it).
      if (stage.kind === 'qa' && stage.allow_empty === undefined)
        out.push({
          file: CONFIG_PATH,
          level: 'note',
          text: `stage ${stage.name} checks only the plans its members attach (label qa:PLAN); a deployment run in which none does stops there (qa_stage_empty). List a plan in delivery.run_plans, or say allow_empty: true on the stage if it may pass with nothing checked (allow_empty: false if stopping there is what you want).`,
        });
  return out;
}
