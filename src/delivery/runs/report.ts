import { makeRefusal } from '../../kernel/codes/table.js';
import { isBotLogin } from '../notices/people.js';
import type { Store } from '../../store/store.js';

// QA23: the fleet report's view of delivery: every active run's waiting
// requirements with their commands, and a flag on each wait that no live
// driver is minding and whose notice is undelivered or unanswered.

export interface DeliveryReportRun {
  id: string;
  repo: string;
  stage: string | null;
  driver: { id: string; live: boolean } | null;
  waits: {
    subject: string;
    detail: string;
    command: string;
    notice: 'none' | 'undelivered' | 'unanswered' | 'answered';
  }[];
  flags: { code: 'qa_wait_unattended' | 'qa_wait_no_person'; message: string; recovery: string }[];
}

export async function buildDeliveryReport(
  store: Pick<Store, 'deploymentRuns' | 'notices'>,
  now: number,
): Promise<DeliveryReportRun[]> {
  const active = (await store.deploymentRuns.list()).filter((r) => r.status === 'active');
  const noticesOf = await Promise.all(active.map((run) => store.notices.forRun(run.id)));
  return active.map((run, i) => {
    const stage = run.settings.stages[run.currentStage]?.name ?? null;
    const driver = run.driverId ? { id: run.driverId, live: run.leaseUntil !== null && run.leaseUntil > now } : null;
    const notices = noticesOf[i]!.filter((n) => n.stage === stage);
    // A member's wait on a group is the group's line; it is not repeated per member.
    const waits = (run.lastWaits?.stage === stage ? run.lastWaits.waits : [])
      .filter((w) => w.code !== 'awaits_group')
      .map((w) => {
        const audience = w.recipient === 'holder' ? 'holder' : 'driver';
        const n = [...notices]
          .reverse()
          .find(
            (x) =>
              x.subject === w.subject &&
              x.audience === audience &&
              !['superseded', 'cancelled', 'resolved', 'withdrawn'].includes(x.state),
          );
        const notice = !n
          ? 'none'
          : n.state === 'pending' || n.state === 'failed'
            ? 'undelivered'
            : n.state === 'answered'
              ? 'answered'
              : 'unanswered';
        return { subject: w.subject, detail: w.detail, command: w.command, notice } as const;
      });
    // A wait nobody was told of, with no person left to tell (a bot creator is passed over), says so rather than "undelivered".
    const noPerson = (run.creator === null || isBotLogin(run.creator)) && !run.settings.steering;
    const flags = driver?.live
      ? []
      : waits
          .filter((w) => w.notice !== 'answered')
          .map((w) => {
            const r =
              w.notice === 'none' && noPerson
                ? makeRefusal('qa_wait_no_person', {
                    run: run.id,
                    stage: stage ?? '',
                    subject: w.subject,
                    detail: w.detail,
                    bots: run.creator ?? '',
                    command: w.command,
                  })
                : makeRefusal('qa_wait_unattended', {
                    run: run.id,
                    stage: stage ?? '',
                    subject: w.subject,
                    detail: w.detail,
                    notice: w.notice === 'none' ? 'undelivered' : w.notice,
                    command: w.command,
                  });
            return {
              code: r.code,
              message: r.message,
              recovery: r.recovery,
            };
          });
    return { id: run.id, repo: run.repo, stage, driver, waits, flags };
  });
}
