import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Actor } from '../../delivery/context.js';
import type { Call, JsonHandlers, JsonRouteName, Reply } from './handler.js';
import { bearerOf, invalid, send, sendRecorded, sendRefusal } from './responses.js';
import type { MatchedRoute, ROUTE } from './routes.js';

// A JSON route served: its query and body parsed by the route's own schemas,
// its handler called with them, its reply written.

export interface JsonRequest {
  req: IncomingMessage;
  res: ServerResponse;
  route: MatchedRoute & { name: JsonRouteName };
  url: URL;
  /** Who calls (null: a public route, or a run's own report, which authenticates the run itself). */
  actor: Actor | null;
  mayRead: (repo: string) => Promise<boolean>;
  /** The body, read once. */
  body: () => Promise<unknown>;
}

/** The handler of route K given its call: the one place a route's name meets its handler's type. */
const handle = <K extends JsonRouteName>(
  handlers: JsonHandlers,
  name: K,
  call: Call<(typeof ROUTE)[K]>,
): Promise<Reply<(typeof ROUTE)[K]>> => handlers[name](call);

export async function serveJson(handlers: JsonHandlers, r: JsonRequest): Promise<true> {
  const { def } = r.route;
  const query = def.query
    ? def.query.safeParse(Object.fromEntries(r.url.searchParams))
    : { success: true as const, data: Object.fromEntries(r.url.searchParams) };
  if (!query.success) return sendRefusal(r.res, invalid(query.error, def.hint));
  const body = def.body ? def.body.safeParse(await r.body()) : { success: true as const, data: undefined };
  if (!body.success) return sendRefusal(r.res, invalid(body.error, def.hint));
  // Parsed by this very route's schemas, and the actor checked against its role: the call its handler declares.
  const call = {
    params: r.route.params,
    query: query.data,
    body: body.data,
    actor: r.actor,
    headers: r.req.headers,
    bearer: bearerOf(r.req),
    readJson: r.body,
    mayRead: r.mayRead,
  } as Call<(typeof ROUTE)[JsonRouteName]>;
  const reply = await handle(handlers, r.route.name, call);
  if ('refusal' in reply) return sendRefusal(r.res, reply.refusal);
  if ('recorded' in reply) return sendRecorded(r.res, reply.status, reply.recorded);
  return send(r.res, reply.status, reply.json);
}
