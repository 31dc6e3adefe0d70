/**
 * The resource layer: the common calls as methods that return the data or throw a `PayorchError`.
 * Everything else (and every detail, such as the response headers) stays reachable through
 * `client.GET/POST/PATCH/DELETE(...)`, which return `{ data, error, response }` instead of throwing.
 */
import type { Client } from 'openapi-fetch';
import type { operations, Schemas } from '@payorch/types';
import { PayorchError } from './errors.js';
import type { AdminPaths, PayorchPaths } from './paths.js';

export interface CallOptions {
  /** Cancels the call (and its retries). */
  signal?: AbortSignal;
}

export interface IdempotentCallOptions extends CallOptions {
  /** Your own `X-Idempotency-Key`; one is generated when omitted. Reuse it to retry the same request later. */
  idempotencyKey?: string;
}

export type ListPaymentMethodsQuery = NonNullable<operations['listPaymentMethods']['parameters']['query']>;
export type GetPaymentQuery = NonNullable<operations['getPayment']['parameters']['query']>;

/** The answer of an openapi-fetch call, loosely typed: the resource methods state their own result types. */
type Answer = { data?: unknown; error?: unknown; response: Response };

async function unwrap<T>(call: Promise<Answer>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new PayorchError(response, error);
  return data as T;
}

function keyHeader(options: IdempotentCallOptions | undefined) {
  return options?.idempotencyKey === undefined ? undefined : { 'X-Idempotency-Key': options.idempotencyKey };
}

export interface PayorchResources {
  customers: {
    /** Creates a customer. 409 `CUSTOMER_ID_DUPLICATED` carries `problem.existing_customer_id`. */
    create(body: Schemas['CreateCustomerRequest'], options?: CallOptions): Promise<Schemas['Customer']>;
  };
  paymentMethods: {
    /** Vaults a card (PCI-certified merchants) or starts a non-card enrollment. Idempotent. */
    enroll(customerId: string, body: Schemas['EnrollPaymentMethodRequest'], options?: IdempotentCallOptions): Promise<Schemas['EnrolledPaymentMethod']>;
    /** A customer's enrolled methods, newest first; pass `limit`/`starting_after` to page. */
    list(customerId: string, query?: ListPaymentMethodsQuery, options?: CallOptions): Promise<Schemas['PaymentMethodList']>;
  };
  payments: {
    /** Creates and processes a payment synchronously (a decline is a payment with status `DECLINED`). Idempotent. */
    create(body: Schemas['CreatePaymentRequest'], options?: IdempotentCallOptions): Promise<Schemas['CreatedPayment']>;
    /** A payment with all its transactions. */
    retrieve(paymentId: string, query?: GetPaymentQuery, options?: CallOptions): Promise<Schemas['Payment']>;
    /** Captures an authorization (`capture: false` payment), all of it or `amount`. Idempotent. */
    capture(paymentId: string, transactionId: string, body?: Schemas['CaptureRequest'], options?: IdempotentCallOptions): Promise<Schemas['Payment']>;
    /** Voids an authorization that was not captured. Idempotent. */
    cancel(paymentId: string, transactionId: string, body?: Schemas['CancelRequest'], options?: IdempotentCallOptions): Promise<Schemas['Payment']>;
    /** Refunds captured money, all that is left or `amount` (several partial refunds allowed). Idempotent. */
    refund(paymentId: string, transactionId: string, body?: Schemas['RefundRequest'], options?: IdempotentCallOptions): Promise<Schemas['Payment']>;
    /** Voids the payment if it is only authorized, refunds it if captured. Idempotent. */
    cancelOrRefund(paymentId: string, body?: Schemas['RefundRequest'], options?: IdempotentCallOptions): Promise<Schemas['Payment']>;
  };
  disputes: {
    /** Disputes a chargeback with 1–10 PDF evidence files (see `evidenceFromBytes`). Idempotent. */
    submit(paymentId: string, transactionId: string, body: Schemas['DisputeRequest'], options?: IdempotentCallOptions): Promise<Schemas['DisputedPayment']>;
    /** Adds evidence while the dispute is `PENDING_REVIEW`. Idempotent. */
    addEvidence(paymentId: string, transactionId: string, body: Schemas['AddDisputeEvidenceRequest'], options?: IdempotentCallOptions): Promise<Schemas['DisputedPayment']>;
  };
}

export function createResources(client: Client<PayorchPaths>): PayorchResources {
  // The path and key of an operation on one transaction of a payment (dispute, capture, cancel, refund).
  const dispute = (payment_id: string, transaction_id: string, options: IdempotentCallOptions | undefined) => ({
    params: { path: { payment_id, transaction_id }, header: keyHeader(options) },
    signal: options?.signal,
  });
  return {
    customers: {
      create: (body, options) => unwrap(client.POST('/customers', { body, signal: options?.signal })),
    },
    paymentMethods: {
      enroll: (customer_id, body, options) =>
        unwrap(client.POST('/customers/{customer_id}/payment-methods', { params: { path: { customer_id }, header: keyHeader(options) }, body, signal: options?.signal })),
      list: (customer_id, query, options) =>
        unwrap(client.GET('/customers/{customer_id}/payment-methods', { params: { path: { customer_id }, query }, signal: options?.signal })),
    },
    payments: {
      // `as never`: openapi-fetch's Writable<> turns a property typed `null` (additional_data.order.fulfillment)
      // into `never`, so the spec's own request type is not assignable; the public signature keeps the spec's type.
      create: (body, options) => unwrap(client.POST('/payments', { params: { header: keyHeader(options) }, body: body as never, signal: options?.signal })),
      retrieve: (payment_id, query, options) => unwrap(client.GET('/payments/{payment_id}', { params: { path: { payment_id }, query }, signal: options?.signal })),
      capture: (paymentId, transactionId, body = {}, options) =>
        unwrap(client.POST('/payments/{payment_id}/transactions/{transaction_id}/capture', { ...dispute(paymentId, transactionId, options), body })),
      cancel: (paymentId, transactionId, body = {}, options) =>
        unwrap(client.POST('/payments/{payment_id}/transactions/{transaction_id}/cancel', { ...dispute(paymentId, transactionId, options), body })),
      refund: (paymentId, transactionId, body = {}, options) =>
        unwrap(client.POST('/payments/{payment_id}/transactions/{transaction_id}/refund', { ...dispute(paymentId, transactionId, options), body })),
      cancelOrRefund: (payment_id, body = {}, options) =>
        unwrap(
          client.POST('/payments/{payment_id}/cancel-or-refund', { params: { path: { payment_id }, header: keyHeader(options) }, body, signal: options?.signal }),
        ),
    },
    disputes: {
      submit: (paymentId, transactionId, body, options) =>
        unwrap(client.POST('/payments/{payment_id}/transactions/{transaction_id}/dispute', { ...dispute(paymentId, transactionId, options), body })),
      addEvidence: (paymentId, transactionId, body, options) =>
        unwrap(client.PATCH('/payments/{payment_id}/transactions/{transaction_id}/dispute', { ...dispute(paymentId, transactionId, options), body })),
    },
  };
}

export interface PayorchAdminResources {
  organizations: {
    /** Creates a merchant organization with its first account and key pair (the secret is shown only here). */
    create(body: Schemas['CreateOrganizationRequest'], options?: CallOptions): Promise<Schemas['OrganizationCreated']>;
  };
  accounts: {
    create(organizationId: string, body: Schemas['CreateAccountRequest'], options?: CallOptions): Promise<Schemas['Account']>;
  };
  apiKeys: {
    /** Issues a new key pair; the old one keeps working until revoked. */
    create(organizationId: string, options?: CallOptions): Promise<Schemas['ApiKeyPair']>;
    revoke(organizationId: string, publicApiKey: string, options?: CallOptions): Promise<void>;
  };
}

export function createAdminResources(client: Client<AdminPaths>): PayorchAdminResources {
  return {
    organizations: {
      create: (body, options) => unwrap(client.POST('/admin/organizations', { body, signal: options?.signal })),
    },
    accounts: {
      create: (organization_id, body, options) =>
        unwrap(client.POST('/admin/organizations/{organization_id}/accounts', { params: { path: { organization_id } }, body, signal: options?.signal })),
    },
    apiKeys: {
      create: (organization_id, options) =>
        unwrap(client.POST('/admin/organizations/{organization_id}/api-keys', { params: { path: { organization_id } }, signal: options?.signal })),
      revoke: (organization_id, public_api_key, options) =>
        unwrap(
          client.DELETE('/admin/organizations/{organization_id}/api-keys/{public_api_key}', {
            params: { path: { organization_id, public_api_key } },
            signal: options?.signal,
          }),
        ),
    },
  };
}
