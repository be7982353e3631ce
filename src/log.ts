/** The slice of a pino logger yoke uses, so tests can pass a silent one. */
export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLog: Log = { info: () => {}, warn: () => {}, error: () => {} };
