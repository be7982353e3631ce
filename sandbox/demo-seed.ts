import { LANDER_CONTEXT } from '../src/config/landing.js';
import {
  DEMO_AGENT,
  DEMO_REPO,
  MAINTAINER,
  ONLOOKER,
  REVIEWER,
  demoEnvironments,
  issueBody,
  type DemoTask,
} from './demo-repo.js';
import type { EmbeddedForge, ForgeRepo } from './forge-server.js';

// The demo repository as its maintainer set it up on the forge: its files and people, the agent's secrets, main
// protected as `yoke init` says, the deploy environments yoke's rule guards, and the issues labelled for AFK work.

export function seedDemoRepo(
  forge: EmbeddedForge,
  o: { files: Record<string, string>; secrets: Record<string, string>; tasks: readonly DemoTask[] },
): ForgeRepo {
  const repo = forge.createRepo(DEMO_REPO, {
    files: o.files,
    installationId: 1,
    collaborators: { [MAINTAINER]: 'admin', [DEMO_AGENT]: 'write', [REVIEWER]: 'maintain', [ONLOOKER]: 'read' },
  });
  Object.assign(repo.secrets, o.secrets);
  // A ruleset requires yoke/lander from yoke's app (what `yoke doctor`'s landing check looks for).
  repo.requiredChecks.set('main', [{ context: LANDER_CONTEXT, integrationId: forge.opts.appId }]);
  for (const e of demoEnvironments(forge.opts.appSlug)) forge.deployments.setEnvironment(repo, e.name, e.ruleApps);
  for (const task of o.tasks)
    forge.createIssue(repo, forge.user(MAINTAINER), task.title, issueBody(task), ['yoke:afk']);
  return repo;
}
