import type { Store } from '../../store/store.js';
import { BudgetLedger, periodOf } from './budgets.js';

// BU01: the one read a pass's money decisions start from (the pass, `yoke plan`, the report).

/** BU01: the ledger a pass starts with: what each repository's runs launched this month cost the budgets so far, and which runs hold reservations. */
export async function openingLedger(store: Store, now: number): Promise<BudgetLedger> {
  const month = periodOf(now, 'month').since;
  const charges = await store.spend.chargesSince(month, periodOf(now, 'day').since);
  return new BudgetLedger(new Map(charges.map(({ repo, ...c }) => [repo, c])), await store.spend.holdings(month));
}
