import type { Migration } from './migration.js';
import { migration as m001 } from './001-fleet-engine.js';
import { migration as m002 } from './002-trust-boundaries.js';
import { migration as m003 } from './003-delivery.js';
import { migration as m004 } from './004-notices-and-close-out.js';
import { migration as m005 } from './005-idempotent-dispatch.js';
import { migration as m006 } from './006-driver-transport.js';
import { migration as m007 } from './007-spend-check-runs-dashboard-issues.js';
import { migration as m008 } from './008-process-leases.js';
import { migration as m009 } from './009-qa-label-reconciliation.js';
import { migration as m010 } from './010-failed-run-notices.js';
import { migration as m011 } from './011-what-the-last-read-of-a-repository-found.js';
import { migration as m012 } from './012-one-leader-for-the-ticks.js';
import { migration as m013 } from './013-the-locked-launch-in-one-round-trip.js';
import { migration as m014 } from './014-github-deployments-protection-reviews.js';
import { migration as m015 } from './015-claim-heads-held-for-a-person.js';
import { migration as m016 } from './016-rate-limit-holds.js';
import { migration as m017 } from './017-fenced-leaders-and-process-identity.js';
import { migration as m018 } from './018-asks-for-changes.js';
import { migration as m019 } from './019-the-base-a-lander-judged.js';
import { migration as m020 } from './020-stacks-and-the-commits-yoke-landed.js';
import { migration as m021 } from './021-the-commit-a-lander-judged.js';
import { migration as m022 } from './022-the-merge-queue-entries-yoke-made.js';
import { migration as m023 } from './023-reservations.js';
import { migration as m024 } from './024-money-notices.js';
import { migration as m025 } from './025-issue-traces.js';
import { migration as m026 } from './026-settled-spend.js';
import { migration as m027 } from './027-installation-readers.js';
import { migration as m028 } from './028-shared-reads.js';
import { migration as m029 } from './029-last-read-digests.js';
import { migration as m030 } from './030-repository-versions.js';

// yoke's schema, one file per migration, applied in version order and never
// edited once shipped: a change is a new file with the next version, added
// here.

export type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
  m001,
  m002,
  m003,
  m004,
  m005,
  m006,
  m007,
  m008,
  m009,
  m010,
  m011,
  m012,
  m013,
  m014,
  m015,
  m016,
  m017,
  m018,
  m019,
  m020,
  m021,
  m022,
  m023,
  m024,
  m025,
  m026,
  m027,
  m028,
  m029,
  m030,
];
