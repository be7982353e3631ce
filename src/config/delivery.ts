import { z } from 'zod';
import { described } from './described.js';
import { refuseRepeats } from './repeats.js';
import { issueLines, shownIssues } from './suggest.js';
import { makeRefusal, type Refusal } from '../kernel/codes/table.js';
import { CONFIG_PATH } from './repo-config.js';

/** The labels an item's delivery carries unless the delivery section names others: owed from the merge, delivered at close-out. */
export const DELIVERY_LABELS = { owed: 'yoke:delivery-owed', delivered: 'yoke:delivered' } as const;

// The `delivery:` section of `.github/yoke.yml`: ordered stages, where the QA
// plans live, the run-level plans and who steers. It is parsed apart from the
// rest of the file: a mistake here refuses delivery with
// qa_configuration_refused and the field to fix, and never stops the engine.

const StageName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'a stage name is 1-40 lower-case letters, digits, - or _ (e.g. staging-qa)');
const Login = z
  .string()
  .regex(
    /^@?[A-Za-z0-9][A-Za-z0-9-]{0,38}(\/[A-Za-z0-9._-]{1,100})?$/,
    'steering is a GitHub login (maint) or a team (acme/release)',
  );
const PlanRef = z.string().min(1).max(200);

// GitHub's environment names: up to 255 characters, no slash at either end.
const EnvironmentName = z
  .string()
  .regex(/^[\w.-][\w .\/-]{0,253}[\w.-]$|^[\w.-]$/, 'an environment is a GitHub environment name, e.g. production');
const WorkflowFile = z
  .string()
  .regex(/^[\w.-]+\.ya?ml$/, 'workflow is a file name under .github/workflows/, e.g. deploy.yml');

/** A deploy stage runs `command:` where the driver is, or `workflow:` on GitHub Actions; either way it is a GitHub deployment to `environment:` (its name by default). */
export const DeployStage = z
  .object(
    described(
      {
        name: StageName,
        kind: z.literal('deploy'),
        command: z.string().min(1, 'a deploy stage needs the command that deploys').optional(),
        workflow: WorkflowFile.optional(),
        environment: EnvironmentName.optional(),
      },
      {
        name: "the stage's name, 1-40 lower-case letters, digits, - or _",
        kind: "deploy: the stage deploys the run's commit",
        command: 'the command that deploys, run where the driver is (or `workflow:`)',
        workflow: 'the workflow under .github/workflows/ that deploys (or `command:`)',
        environment: "the GitHub environment deployed to (default: the stage's name)",
      },
    ),
  )
  .strict()
  .superRefine((s, ctx) => {
    if ((s.command === undefined) === (s.workflow === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message:
          s.command === undefined
            ? 'a deploy stage needs what deploys: `command:` (run where the driver is, e.g. ./deploy.sh staging) or `workflow:` (a file under .github/workflows/, e.g. deploy.yml)'
            : 'a deploy stage names either the command that deploys or the workflow (deploy.yml) that does, not both',
      });
  });
export type DeployStage = z.infer<typeof DeployStage>;
/** A QA stage; with nothing to check it settles only when it says so (TR29). */
export const QaStage = z
  .object(
    described(
      { name: StageName, kind: z.literal('qa'), allow_empty: z.boolean().optional() },
      {
        name: "the stage's name, 1-40 lower-case letters, digits, - or _",
        kind: "qa: the stage runs the QA plans of the run's items",
        allow_empty: 'the stage may settle with nothing to check',
      },
    ),
  )
  .strict();
export const Stage = z.discriminatedUnion('kind', [DeployStage, QaStage]);
export type Stage = z.infer<typeof Stage>;

/** How deploy stages meet GitHub's deployments and yoke's protection rule. */
export const DeploymentSettings = z
  .object(
    described(
      {
        required_contexts: z.array(z.string().min(1).max(200)).default([]),
        unruled_environments: z.enum(['reject', 'approve', 'ignore']).default('reject'),
      },
      {
        required_contexts:
          "the commit statuses GitHub must see pass before it accepts a stage's deployment (none by default)",
        unruled_environments:
          'a protection-rule request for an environment no stage names: reject (fails closed), approve, or ignore (left for someone else)',
      },
    ),
  )
  .strict();

export const DeliverySettings = z
  .object(
    described(
      {
        stages: z.array(Stage).min(1, 'list at least one stage'),
        plans_dir: z
          .string()
          .regex(/^[\w.-]+(\/[\w.-]+)*\/?$/, 'plans_dir is a folder of the repository, e.g. .github/yoke/qa/')
          .transform((d) => (d.endsWith('/') ? d : `${d}/`))
          .default('.github/yoke/qa/'),
        run_plans: z.array(PlanRef).default([]),
        steering: Login.transform((l) => l.replace(/^@/, '')).optional(),
        owed_label: z.string().min(1).max(50).default(DELIVERY_LABELS.owed),
        delivered_label: z.string().min(1).max(50).default(DELIVERY_LABELS.delivered),
        /** TR29: besides the default branch, the (protected) branches a deployment run may pin a commit of. */
        release_branches: z
          .array(z.string().regex(/^[\w./-]{1,200}$/, 'a release branch is a branch name, e.g. release/1.x'))
          .max(20)
          .default([]),
        deployments: DeploymentSettings.default({ required_contexts: [], unruled_environments: 'reject' }),
      },
      {
        stages: 'the ordered stages a deployment run goes through: deploy and qa',
        plans_dir: 'the folder of QA plans',
        run_plans: 'plans the driver runs for the whole run at each QA stage',
        steering: 'a login or org/team who steers deployment runs: told last, when nobody else answers',
        owed_label: 'the label on an item whose delivery is owed (its claim PR merged)',
        delivered_label: 'the label on an item closed out as delivered',
        release_branches: 'besides the default branch, the (protected) branches a deployment run may pin a commit of',
        deployments: "how deploy stages meet GitHub's deployments and yoke's protection rule",
      },
    ),
  )
  .strict()
  .superRefine((d, ctx) =>
    refuseRepeats(ctx, d.stages, { list: 'stages', field: 'name', what: 'stage name' }, (s) => s.name),
  );
export type DeliverySettings = z.infer<typeof DeliverySettings>;

export type DeliveryConfigResult =
  { state: 'absent' } | { state: 'valid'; settings: DeliverySettings } | { state: 'refused'; refusal: Refusal };

/** The field a zod issue points at, as a person writes it in the file: `delivery.stages[1].command`. */
export function fieldOf(prefix: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : `${out}.${String(p)}`), prefix);
}

/** Reads the raw `delivery` value of a valid opt-in file. */
export function parseDeliverySettings(repo: string, raw: unknown): DeliveryConfigResult {
  if (raw === undefined || raw === null) return { state: 'absent' };
  const parsed = DeliverySettings.safeParse(raw);
  if (parsed.success) return { state: 'valid', settings: parsed.data };
  const first = shownIssues(DeliverySettings, parsed.error.issues, raw)[0]!;
  return {
    state: 'refused',
    refusal: makeRefusal('qa_configuration_refused', {
      repo,
      file: CONFIG_PATH,
      field: fieldOf('delivery', first.path),
      detail: issueLines(DeliverySettings, parsed.error.issues, raw, (path) => fieldOf('delivery', path)).join('; '),
      then: 'yoke reads it again when a deployment run is created. The engine runs on meanwhile.',
    }),
  };
}

/** The label that shows an item's delivery is owed: the delivery section's, else the default (even when that section is refused). */
export function owedLabelOf(raw: unknown): string {
  const parsed = z
    .object({ owed_label: z.string().min(1).max(50) })
    .partial()
    .safeParse(raw ?? {});
  return (parsed.success && parsed.data.owed_label) || DELIVERY_LABELS.owed;
}

/** The GitHub environment a deploy stage deploys to. */
export const environmentOf = (stage: DeployStage): string => stage.environment ?? stage.name;

/** Whether a stage deploys to an environment: GitHub's environment names are case-insensitive. */
export const deploysTo = (stage: Stage, environment: string): boolean =>
  stage.kind === 'deploy' && environmentOf(stage).toLowerCase() === environment.toLowerCase();

/** A run's deployment settings; runs created before they existed read the defaults, which fail closed. */
export const deploymentSettingsOf = (settings: DeliverySettings): z.output<typeof DeploymentSettings> =>
  settings.deployments ?? { required_contexts: [], unruled_environments: 'reject' };
