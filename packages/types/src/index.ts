/**
 * @payorch/types: the generated OpenAPI types (see ./generated/openapi.ts, never edited by hand) plus
 * per-operation helper types in the spirit of oapi-codegen's strict server: each operation's request
 * (path, query, header, body) and its reply, a union discriminated on the HTTP status.
 */
import type { components, operations } from './generated/openapi.js';

export type { components, operations, paths, webhooks } from './generated/openapi.js';
/** The spec's webhook events: `WebhookEvent` is their union, discriminated by `type_event`. */
export type { WebhookEvent, WebhookEventMap, WebhookEventType } from './generated/webhook-events.js';

/** Every component schema, by name: `Schemas['Customer']`. */
export type Schemas = components['schemas'];
/** The RFC 9457 problem body of every error response. */
export type Problem = Schemas['Problem'];
/** Every operationId of the spec. */
export type OperationId = keyof operations;

type Empty = Record<string, never>;
type Params<K extends OperationId> = operations[K]['parameters'];
type Part<P, Where extends string> = P extends { [W in Where]?: infer X } ? ([X] extends [never] ? Empty : [X] extends [undefined] ? Empty : NonNullable<X>) : Empty;
/** A reply's body: JSON, a problem, or text (an acknowledgement a provider expects, sent as given). */
type MediaBody<C> = C extends { 'application/json': infer B }
  ? B
  : C extends { 'application/problem+json': infer P }
    ? P
    : C extends { 'text/plain': infer T }
      ? T
      : never;

/** The JSON body an operation accepts (`undefined` for operations without one). */
export type RequestBody<K extends OperationId> = operations[K] extends { requestBody: { content: infer C } }
  ? MediaBody<C>
  : operations[K] extends { requestBody?: { content: infer C } }
    ? MediaBody<C> | undefined
    : undefined;

/** What the server hands a handler once the request passed validation. */
export interface OperationRequest<K extends OperationId> {
  params: Part<Params<K>, 'path'>;
  query: Part<Params<K>, 'query'>;
  headers: Part<Params<K>, 'header'>;
  body: RequestBody<K>;
}

type Responses<K extends OperationId> = operations[K]['responses'];
type ReplyFor<S, R> = R extends { content: infer C }
  ? { status: S; body: MediaBody<C>; headers?: Record<string, string> }
  : { status: S; body?: undefined; headers?: Record<string, string> };

/** Every reply an operation may give: `{ status: 404, body: Problem } | { status: 200, body: Payment } | …`. */
export type OperationReply<K extends OperationId> = {
  [S in keyof Responses<K>]: ReplyFor<S, Responses<K>[S]>;
}[keyof Responses<K>];

/** The statuses an operation documents. */
export type OperationStatus<K extends OperationId> = OperationReply<K>['status'];

/** The successful (2xx) replies of an operation. */
export type SuccessReply<K extends OperationId> = Extract<OperationReply<K>, { status: 200 | 201 | 202 | 204 }>;

/** A handler per operation: the conformance of a map of them is proved by `satisfies Handlers<Ctx>`. */
export type Handler<K extends OperationId, Ctx> = (request: OperationRequest<K>, ctx: Ctx) => Promise<OperationReply<K>>;
export type Handlers<Ctx> = { [K in OperationId]: Handler<K, Ctx> };
