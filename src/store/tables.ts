import type { RowOf } from './sql/columns.js';
import { DELIVERY_TABLES } from './tables-delivery.js';
import { FLEET_TABLES } from './tables-fleet.js';

// Every table of the store, declared once as its columns: the migrations make
// them (`migrations/`), and these declarations say what a row read from each
// holds. Row types, column lists and the checks as rows are read all come
// from here; test/store/tables.test.ts checks each declaration against both
// engines' catalogues (columns, kinds, nullability, and each CHECK's values),
// so a migration that changes a table must change its line here too.

export const TABLES = { ...FLEET_TABLES, ...DELIVERY_TABLES };

export type Tables = typeof TABLES;
export type TableName = keyof Tables;
/** A whole row of a table, as read with `SELECT *`. */
export type TableRow<T extends TableName> = RowOf<Tables[T]>;
