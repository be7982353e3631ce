import { makeRefusal } from '../codes.js';
import type { Store } from '../store/store.js';

// QA23: the fleet report's view of delivery: every active run's waiting
// requirements with their commands, and a flag on each wait that no live
// driver is minding and whose notice is undelivered or unanswered.

export interface DeliveryReportRun {
  id: string;
  repo: string;
  stage: string | null;
  driver: { id: string; live: boolean } | null;
  waits: { subject: string; detail: string; command: string; notice: 'none' | 'undelivered' | 'unanswered' | 'answered' }[];
  flags: { code: 'qa_wait_unattended'; message: string; recovery: string }[];
}

export function buildDeliveryReport(store: Pick<Store, 'deployments' | 'notices'>, now: number): DeliveryReportRun[] {
  return store.deployments
    .list()
    .filter((r) => r.status === 'active')
    .map((run) => {
      const stage = run.settings.stages[run.currentStage]?.name ?? null;
      const driver = run.driverId ? { id: run.driverId, live: run.leaseUntil !== null && run.leaseUntil > now } : null;
      const notices = store.notices.forRun(run.id).filter((n) => n.stage === stage);
      // A member's wait on a group is the group's line; it is not repeated per member.
      const waits = (run.lastWaits?.stage === stage ? run.lastWaits.waits : []).filter((w) => w.code !== 'awaits_group').map((w) => {
        const audience = w.recipient === 'holder' ? 'holder' : 'driver';
        const n = [...notices].reverse().find((x) => x.subject === w.subject && x.audience === audience && !['superseded', 'cancelled', 'resolved', 'withdrawn'].includes(x.state));
        const notice = !n ? 'none' : n.state === 'pending' || n.state === 'failed' ? 'undelivered' : n.state === 'answered' ? 'answered' : 'unanswered';
        return { subject: w.subject, detail: w.detail, command: w.command, notice } as const;
      });
      const flags = driver?.live
        ? []
        : waits
            .filter((w) => w.notice !== 'answered')
            .map((w) => {
              const r = makeRefusal('qa_wait_unattended', { run: run.id, stage: stage ?? '', subject: w.subject, detail: w.detail, notice: w.notice === 'none' ? 'undelivered' : w.notice, command: w.command });
              return { code: 'qa_wait_unattended' as const, message: r.message, recovery: r.recovery };
            });
      return { id: run.id, repo: run.repo, stage, driver, waits, flags };
    });
}
