// What a row read from the database holds, declared as data and checked as it
// is read: each column's kind says what a value must be, and the row's type
// is derived from it. No read is a cast: a value that is not what its column
// declares is a store bug, and is refused with the query and column named.

/** One column: how a value read for it is checked (and, for numbers PostgreSQL sends as text, read). */
export interface Column<T> {
  readonly kind: string;
  readonly nullable: boolean;
  /** The allowed values: a CHECK (col IN (…)) the database keeps, or (`checked: false`) only yoke's own writes. */
  readonly values?: readonly string[];
  readonly checked?: boolean;
  decode(value: unknown): T | typeof BAD;
}

/** What a column's decode answers for a value it does not take. */
export const BAD = Symbol('bad');

const number = (integer: boolean) => (v: unknown) => {
  // PostgreSQL answers NUMERIC (a SUM, a ROUND) as text; both engines answer whole numbers as numbers.
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && (!integer || Number.isInteger(n)) ? n : BAD;
};

export const int: Column<number> = { kind: 'int', nullable: false, decode: number(true) };
export const real: Column<number> = { kind: 'real', nullable: false, decode: number(false) };
export const text: Column<string> = {
  kind: 'text',
  nullable: false,
  decode: (v) => (typeof v === 'string' ? v : BAD),
};
/** A value copied as it is (a store copied table by table): text, a number or null. */
export const value: Column<string | number | null> = {
  kind: 'value',
  nullable: true,
  decode: (v) => (v === null || typeof v === 'string' || typeof v === 'number' ? v : BAD),
};

/** A text column that holds one of these values (its CHECK). */
export function oneOf<const V extends readonly string[]>(values: V): Column<V[number]> & { readonly values: V } {
  return {
    kind: 'text',
    nullable: false,
    values,
    decode: (v) => (typeof v === 'string' && values.includes(v) ? (v as V[number]) : BAD),
  };
}

/** A text column only yoke writes, holding one of these values (no CHECK in the database: read back as checked). */
export function textOf<const V extends readonly string[]>(values: V): Column<V[number]> {
  return { ...oneOf(values), checked: false };
}

/**
 * A text column holding JSON that only yoke writes (`JSON.stringify` of a T), read back parsed. The one
 * assumption a JSON column makes is declared here, with its table: what yoke wrote is what it reads.
 */
export function jsonOf<T>(): Column<T> {
  return {
    kind: 'text',
    nullable: false,
    decode: (v) => {
      if (typeof v !== 'string') return BAD;
      try {
        return JSON.parse(v) as T;
      } catch {
        return BAD;
      }
    },
  };
}

export function nullable<T>(c: Column<T>): Column<T | null> {
  return { ...c, nullable: true, decode: (v) => (v === null || v === undefined ? null : c.decode(v)) };
}

/** A row's columns, by name. */
export type Shape = Readonly<Record<string, Column<unknown>>>;
export type RowOf<S extends Shape> = { -readonly [K in keyof S]: S[K] extends Column<infer T> ? T : never };

/** A column the shape declares is missing from a row, or holds what it does not take. */
export class RowShapeError extends Error {
  constructor(query: string, column: string, value: unknown, kind: string) {
    super(
      `The store read ${JSON.stringify(value)} (${value === null ? 'null' : typeof value}) for column ${column}, which holds ${kind}: a store bug (the query and its declared row disagree). Query: ${query.replace(/\s+/g, ' ').trim().slice(0, 300)}`,
    );
  }
}

/** A raw row checked against its shape: the declared columns, each of its kind (other columns are left out). */
export function decodeRow<S extends Shape>(shape: S, raw: Record<string, unknown>, query: string): RowOf<S> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(shape)) {
    const c = shape[key]!;
    const v = c.decode(raw[key] === undefined && c.nullable ? null : raw[key]);
    if (v === BAD)
      throw new RowShapeError(
        query,
        key,
        raw[key],
        `${c.nullable ? 'null or ' : ''}${c.values ? `one of ${c.values.join(', ')}` : c.kind}`,
      );
    out[key] = v;
  }
  return out as RowOf<S>;
}

/** The same shape with only these columns (a query that selects a few of a table's). */
export function pick<S extends Shape, K extends keyof S>(shape: S, ...keys: K[]): Pick<S, K> {
  const out: Partial<S> = {};
  for (const k of keys) out[k] = shape[k];
  return out as Pick<S, K>;
}
