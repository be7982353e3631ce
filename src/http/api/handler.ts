import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import type { Refusal } from '../../kernel/codes/table.js';
import type { Result } from '../../kernel/result.js';
import type { Actor } from '../../delivery/context.js';
import { ROUTE, type RouteDef, type RouteName } from './routes.js';

// What a JSON route's handler is given and answers with, typed from its
// declaration in routes.ts: its body and query already parsed, and an answer
// the route's answer schema describes. A handler missing from the table, or
// answering with another shape, fails to compile.

type Parsed<S, Else> = S extends z.ZodType ? z.output<S> : Else;

export interface Call<R extends RouteDef> {
  params: Record<string, string>;
  query: Parsed<R['query'], Record<string, string>>;
  body: Parsed<R['body'], undefined>;
  /** Who calls: null on public routes and a run's own reports, which authenticate the run themselves. */
  actor: R['role'] extends 'public' | 'run-report' ? null : Actor;
  headers: IncomingHttpHeaders;
  bearer: string | null;
  /** The body as sent, for the run reports, which parse it only once the run is authenticated. */
  readJson: () => Promise<unknown>;
  /** TR25: whether this credential may see a repository's rows in a listing. */
  mayRead: (repo: string) => Promise<boolean>;
}

export type AnswerOf<R extends RouteDef> = R['answer'] extends z.ZodType ? z.input<R['answer']> : never;

export type Reply<R extends RouteDef> =
  | { status: number; json: AnswerOf<R> }
  /** A body exactly as recorded: a replayed gate check answers byte for byte. */
  | { status: number; recorded: string }
  | { refusal: Refusal };

export type JsonRouteName = { [K in RouteName]: (typeof ROUTE)[K]['answer'] extends null ? never : K }[RouteName];

export type JsonHandler<K extends JsonRouteName> = (call: Call<(typeof ROUTE)[K]>) => Promise<Reply<(typeof ROUTE)[K]>>;

export type JsonHandlers<K extends JsonRouteName = JsonRouteName> = { [N in K]: JsonHandler<N> };

/** A result as a reply: its value with the status given, or its refusal. */
export const replyWith = <T>(r: Result<T>, status = 200): { status: number; json: T } | { refusal: Refusal } =>
  r.ok ? { status, json: r.value } : { refusal: r.refusal };

export const isJsonRoute = (name: RouteName): name is JsonRouteName => ROUTE[name].answer !== null;
