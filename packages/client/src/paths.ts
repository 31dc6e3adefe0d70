/**
 * The client's view of the spec's `paths`: identical to the generated types except that
 * `X-Idempotency-Key` is optional wherever the spec requires it, because the client generates one when
 * the caller passes none (see ./middleware.ts). Also the list of those operations, checked against the
 * generated types at compile time in both directions.
 */
import type { paths } from '@payorch/types';

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';

/** The header the client fills in when it is missing. */
export const IDEMPOTENCY_HEADER = 'X-Idempotency-Key';
type IdempotencyHeader = typeof IDEMPOTENCY_HEADER;

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];

/** `header` with the idempotency key optional; `header` itself becomes optional when nothing in it is required any more. */
type RelaxHeader<H> = Simplify<Omit<H, IdempotencyHeader> & { [K in IdempotencyHeader]?: H[K & keyof H] }>;
type RelaxParameters<P> = P extends { header: infer H }
  ? [RequiredKeys<Omit<H, IdempotencyHeader>>] extends [never]
    ? Simplify<Omit<P, 'header'> & { header?: RelaxHeader<H> }>
    : Simplify<Omit<P, 'header'> & { header: RelaxHeader<H> }>
  : P;

/** The operation declares the header, required or (idempotent by nature: unenroll) optional. */
type HasIdempotencyKey<Op> = Op extends { parameters: { header?: infer H } }
  ? [NonNullable<H>] extends [never]
    ? false
    : [IdempotencyHeader] extends [keyof NonNullable<H>]
      ? true
      : false
  : false;

/** An operation of the spec with `X-Idempotency-Key` made optional (other operations unchanged). */
export type WithOptionalIdempotencyKey<Op> =
  HasIdempotencyKey<Op> extends true ? { [K in keyof Op]: K extends 'parameters' ? RelaxParameters<Op[K]> : Op[K] } : Op;

/**
 * The spec's `paths` as the client accepts them: every path and method of the generated `paths`, with
 * `X-Idempotency-Key` optional where the spec requires it. Pass a key to control it yourself.
 */
export type PayorchPaths = {
  [P in keyof paths]: { [M in keyof paths[P]]: M extends HttpMethod ? WithOptionalIdempotencyKey<paths[P][M]> : paths[P][M] };
};

/** `"POST /payments"`-style names of the operations whose spec declares `X-Idempotency-Key`. */
export type IdempotentRoute = {
  [P in keyof paths]: {
    [M in HttpMethod]: paths[P] extends { [K in M]: infer Op } ? (HasIdempotencyKey<Op> extends true ? `${Uppercase<M>} ${P & string}` : never) : never;
  }[HttpMethod];
}[keyof paths];

/** The operations that get a generated idempotency key (and may be retried). */
export const IDEMPOTENT_ROUTES = [
  'POST /customers/{customer_id}/payment-methods',
  'POST /payments',
  'POST /payments/{payment_id}/transactions/{transaction_id}/dispute',
  'PATCH /payments/{payment_id}/transactions/{transaction_id}/dispute',
  'POST /payments/{payment_id}/transactions/{transaction_id}/capture',
  'POST /payments/{payment_id}/transactions/{transaction_id}/cancel',
  'POST /payments/{payment_id}/transactions/{transaction_id}/refund',
  'POST /payments/{payment_id}/cancel-or-refund',
  'POST /customers/{customer_id}/payment-methods/{payment_method_id}/unenroll',
  'POST /routing',
  'POST /connections',
] as const satisfies readonly IdempotentRoute[];

// Compile-time proof that the list above names every idempotent operation of the spec: a new one in the
// spec makes this alias fail to type-check until it is added.
type AssertNever<T extends never> = T;
export type _EveryIdempotentRouteListed = AssertNever<Exclude<IdempotentRoute, (typeof IDEMPOTENT_ROUTES)[number]>>;

/** The admin API's paths (`/admin/...`), reached through `createPayorchAdminClient`. */
export type AdminPaths = { [P in keyof PayorchPaths as P extends `/admin/${string}` ? P : never]: PayorchPaths[P] };
