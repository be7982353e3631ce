import { z } from 'zod';

// A workflow file as the embedded runner reads it: what GitHub Actions would
// accept of the keys yoke's templates use, and each job's needs.

const Step = z.object({
  id: z.string().optional(),
  name: z.string().optional(),
  'continue-on-error': z.boolean().optional(),
  uses: z.string().optional(),
  run: z.string().optional(),
  if: z.string().optional(),
  'working-directory': z.string().optional(),
  with: z.record(z.string(), z.unknown()).optional(),
  env: z.record(z.string(), z.unknown()).optional(),
});
const Permissions = z.union([z.record(z.string(), z.string()), z.enum(['read-all', 'write-all'])]);
const Job = z
  .object({
    if: z.string().optional(),
    needs: z.union([z.string(), z.array(z.string())]).optional(),
    permissions: Permissions.optional(),
    env: z.record(z.string(), z.unknown()).optional(),
    outputs: z.record(z.string(), z.string()).optional(),
    environment: z.union([z.string(), z.object({ name: z.string(), url: z.string().optional() })]).optional(),
    steps: z.array(Step),
  })
  .passthrough();
export const Workflow = z.object({
  name: z.string().optional(),
  'run-name': z.string().optional(),
  permissions: Permissions.optional(),
  on: z
    .object({
      workflow_dispatch: z
        .object({
          inputs: z
            .record(
              z.string(),
              z.object({ required: z.boolean().optional(), default: z.string().optional() }).passthrough(),
            )
            .optional(),
        })
        .nullable(),
    })
    .passthrough(),
  jobs: z.record(z.string(), Job),
});
export type Workflow = z.infer<typeof Workflow>;
export type Job = z.infer<typeof Job>;
export type Permissions = z.infer<typeof Permissions>;

export const needsOf = (job: Job): string[] =>
  job.needs === undefined ? [] : Array.isArray(job.needs) ? job.needs : [job.needs];
