// The shape of one code's entry in the code table (src/codes.ts), shared by its parts.

type Text<P> = (p: P) => string;

export interface CodeDef<P> {
  status: number;
  message: Text<P>;
  recovery: Text<P>;
}

export const code = <P extends object = Record<never, never>>(def: CodeDef<P>): CodeDef<P> => def;
