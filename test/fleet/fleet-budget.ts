// BU01: the budgets the cross-process workers run under (fleet-worker.ts, fleet.processes.test.ts).
export const BUDGET = { repo: 5, fleet: 12, run: 2 } as const;
