import type { Store } from '../store/store.js';
import { BudgetLedger, periodOf } from './budgets.js';

// BU01: the one read a pass's money decisions start from (the pass, `yoke plan`, the report).

/** BU01: the ledger a pass starts with: what each repository's runs launched this month cost the budgets so far. */
export async function openingLedger(store: Store, now: number): Promise<BudgetLedger> {
  const charges = await store.spend.chargesSince(periodOf(now, 'month').since, periodOf(now, 'day').since);
  return new BudgetLedger(new Map(charges.map(({ repo, ...c }) => [repo, c])));
}
