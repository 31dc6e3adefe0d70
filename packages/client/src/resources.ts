/**
 * The resource layer: the common calls as methods that return the data or throw a `PayorchError`.
 * Everything else (and every detail, such as the response headers) stays reachable through
 * `client.GET/POST/PATCH/DELETE(...)`, which return `{ data, error, response }` instead of throwing.
 */
import type { Client } from 'openapi-fetch';
import type { operations, Schemas } from '@payorch/types';
import { PayorchError } from './errors.js';
import { paged, type Paged } from './pagination.js';
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
export type ListCustomersQuery = NonNullable<operations['listCustomers']['parameters']['query']>;
export type ListPaymentsQuery = NonNullable<operations['listPayments']['parameters']['query']>;
export type ListEventsQuery = NonNullable<operations['listEvents']['parameters']['query']>;
export type ListWebhookEndpointsQuery = NonNullable<operations['listWebhookEndpoints']['parameters']['query']>;
export type ListWebhooksQuery = operations['listWebhooks']['parameters']['query'];
export type ListRoutingsQuery = operations['listRoutings']['parameters']['query'];
export type ListWebhookDeliveriesQuery = NonNullable<operations['listWebhookDeliveries']['parameters']['query']>;

export interface UpdateCallOptions extends CallOptions {
  /** An `ETag` of the customer (`customers.retrieveWithEtag`): the change fails with 412 if it changed meanwhile. */
  ifMatch?: string;
}

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
    retrieve(customerId: string, options?: CallOptions): Promise<Schemas['Customer']>;
    /** The customer and its `ETag`, to pass as `ifMatch` to `update`. */
    retrieveWithEtag(customerId: string, options?: CallOptions): Promise<{ customer: Schemas['Customer']; etag: string }>;
    /** Yuno's retrieve by external id: 404 `CUSTOMER_NOT_FOUND` when no customer has it. */
    retrieveByMerchantCustomerId(merchantCustomerId: string, options?: CallOptions): Promise<Schemas['Customer']>;
    /** Changes the fields given; `null` clears one. With `ifMatch`, 412 `PRECONDITION_FAILED` when the customer changed. */
    update(customerId: string, body: Schemas['UpdateCustomerRequest'], options?: UpdateCallOptions): Promise<Schemas['Customer']>;
    /** Deletes the customer and destroys the card data of its payment methods. */
    delete(customerId: string, options?: CallOptions): Promise<void>;
    /** Live customers newest first (created range), `GET /customers/list`; await a page or `for await` all. */
    list(query?: ListCustomersQuery, options?: CallOptions): Paged<Schemas['CustomerList'], Schemas['Customer']>;
  };
  paymentMethods: {
    /** Vaults a card (PCI-certified merchants) or starts a non-card enrollment. Idempotent. */
    enroll(customerId: string, body: Schemas['EnrollPaymentMethodRequest'], options?: IdempotentCallOptions): Promise<Schemas['EnrolledPaymentMethod']>;
    /** A customer's enrolled methods, newest first; await for one page, or `for await` every method. */
    list(customerId: string, query?: ListPaymentMethodsQuery, options?: CallOptions): Paged<Schemas['PaymentMethodList'], Schemas['EnrolledPaymentMethod']>;
    /** One method by its `vaulted_token`. */
    retrieve(customerId: string, vaultedToken: string, options?: CallOptions): Promise<Schemas['EnrolledPaymentMethod']>;
    /** `UNENROLLED`, its sealed card data destroyed. Idempotent. */
    unenroll(customerId: string, vaultedToken: string, options?: IdempotentCallOptions): Promise<Schemas['EnrolledPaymentMethod']>;
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
    /** Payments newest first (by `merchant_order_id`, status, customer, created range); await a page or `for await` all. */
    list(query?: ListPaymentsQuery, options?: CallOptions): Paged<Schemas['PaymentList'], Schemas['Payment']>;
  };
  events: {
    /** Webhook events of the last 30 days, newest first; await a page or `for await` all. */
    list(query?: ListEventsQuery, options?: CallOptions): Paged<Schemas['EventList'], Schemas['Event']>;
    retrieve(eventId: string, options?: CallOptions): Promise<Schemas['Event']>;
  };
  webhookEndpoints: {
    /** The answer carries the signing `secret`, shown only here. */
    create(body: Schemas['WebhookEndpointCreateRequest'], options?: CallOptions): Promise<Schemas['WebhookEndpointCreated']>;
    list(query?: ListWebhookEndpointsQuery, options?: CallOptions): Paged<Schemas['WebhookEndpointList'], Schemas['WebhookEndpoint']>;
    retrieve(endpointId: string, options?: CallOptions): Promise<Schemas['WebhookEndpoint']>;
    update(endpointId: string, body: Schemas['WebhookEndpointUpdateRequest'], options?: CallOptions): Promise<Schemas['WebhookEndpoint']>;
    delete(endpointId: string, options?: CallOptions): Promise<void>;
    rotateSecret(endpointId: string, body?: Schemas['WebhookSecretRotateRequest'], options?: CallOptions): Promise<Schemas['WebhookSecretRotated']>;
  };
  /**
   * Yuno's webhook management API (`/webhooks`): the same endpoints as `webhookEndpoints`, in Yuno's shape
   * (docs/guides/yuno-compatibility.md, "Webhook management"). Secrets come back as `***`, never in clear.
   */
  webhooks: {
    /** Every endpoint of the organization (a plain array, at most 16), optionally only `ACTIVE` or `INACTIVE` ones. */
    list(query: ListWebhooksQuery, options?: CallOptions): Promise<Schemas['YunoWebhook'][]>;
    /** 409 `WEBHOOK_ALREADY_EXISTS` for a name another endpoint has; triggers without a payorch event are listed in `unsupported_triggers`. */
    create(body: Schemas['YunoWebhookCreateRequest'], options?: CallOptions): Promise<Schemas['YunoWebhook']>;
    retrieve(webhookId: string, accountId: string, options?: CallOptions): Promise<Schemas['YunoWebhook']>;
    update(webhookId: string, body: Schemas['YunoWebhookUpdateRequest'], options?: CallOptions): Promise<Schemas['YunoWebhook']>;
    /** Answers the webhook as it was. */
    delete(webhookId: string, accountId: string, options?: CallOptions): Promise<Schemas['YunoWebhook']>;
  };
  webhookDeliveries: {
    list(endpointId: string, query?: ListWebhookDeliveriesQuery, options?: CallOptions): Paged<Schemas['WebhookDeliveryList'], Schemas['WebhookDelivery']>;
    retrieve(endpointId: string, deliveryId: string, options?: CallOptions): Promise<Schemas['WebhookDelivery']>;
    redeliver(endpointId: string, deliveryId: string, options?: CallOptions): Promise<Schemas['WebhookDelivery']>;
  };
  /** Routings (docs/guides/routing.md): one per account and payment method; steps are the failover order. */
  routing: {
    /** 409 `ROUTING_ALREADY_EXISTS` when the account has one for the payment method (every account starts with a CARD routing). Idempotent. */
    create(body: Schemas['RoutingCreateRequest'], options?: IdempotentCallOptions): Promise<Schemas['Routing']>;
    /** The account's routings (a plain array), optionally of one payment method. */
    list(query: ListRoutingsQuery, options?: CallOptions): Promise<Schemas['RoutingList']>;
    retrieve(routingId: string, options?: CallOptions): Promise<Schemas['Routing']>;
    /** Changes `name`, `default_route` or `condition_sets` (the whole list). */
    update(routingId: string, body: Schemas['RoutingUpdateRequest'], options?: CallOptions): Promise<Schemas['Routing']>;
  };
  /** The organization's connections to providers (credentials never shown). */
  connections: {
    /**
     * Connects a provider with your account's credentials there (their shape per provider: `providers.list()`
     * names the fields). 422 `PROVIDER_NOT_AVAILABLE` for a provider the service does not run,
     * `CONNECTION_VALIDATION_FAILED` for credentials of the other environment. Idempotent.
     */
    create(body: Schemas['ConnectionCreateRequest'], options?: IdempotentCallOptions): Promise<Schemas['Connection']>;
    list(options?: CallOptions): Promise<Schemas['ConnectionList']>;
    /** 409 `CONNECTION_IN_USE` while a routing step names it; follow-ups of its earlier payments keep working. */
    delete(connectionId: string, options?: CallOptions): Promise<void>;
    /** Changes `name`, `enabled` or `timeout_ms`. */
    update(connectionId: string, body: Schemas['ConnectionUpdateRequest'], options?: CallOptions): Promise<Schemas['Connection']>;
  };
  /** The providers the service runs and what each serves (the capability matrix). */
  providers: {
    list(options?: CallOptions): Promise<Schemas['ProviderList']>;
  };
  /** Test helpers; the server answers 404 outside sandbox mode. */
  sandbox: {
    createChargeback(paymentId: string, body?: Schemas['SandboxChargebackRequest'], options?: CallOptions): Promise<Schemas['Transaction']>;
    resolveDispute(paymentId: string, body: Schemas['SandboxDisputeResolveRequest'], options?: CallOptions): Promise<Schemas['Payment']>;
    /** Pays, declines, expires or cancels a pending asynchronous payment (PIX, transfer, voucher, wallet) as the shopper or provider would. */
    settlePendingPayment(paymentId: string, body: Schemas['SandboxPendingOutcomeRequest'], options?: CallOptions): Promise<Schemas['Payment']>;
  };
  /**
   * Checkout sessions (docs/guides/checkout.md): the merchant's server says what the shopper pays; the
   * hosted card form tokenizes the card for it with the public key; the server pays with the token.
   */
  checkoutSessions: {
    /** `allowed_origins` names the pages that may embed the hosted form and receive its token. */
    create(body: Schemas['CheckoutSessionCreateRequest'], options?: CallOptions): Promise<Schemas['CheckoutSession']>;
    retrieve(checkoutSession: string, options?: CallOptions): Promise<Schemas['CheckoutSession']>;
    /** 409 `INVALID_STATUS` once the session is paid or expired. */
    update(checkoutSession: string, body: Schemas['CheckoutSessionUpdateRequest'], options?: CallOptions): Promise<Schemas['CheckoutSession']>;
    /** What can pay the session: a new card when the routing serves it, then the customer's enrolled cards. */
    paymentMethods(checkoutSession: string, options?: CallOptions): Promise<Schemas['CheckoutPaymentMethodList']>;
    /**
     * A one-time token for the session (what the hosted form calls, with the public key alone; a client made
     * with the key pair may call it too). It pays once, within 10 minutes, exactly the session's amount.
     */
    createToken(checkoutSession: string, body: Schemas['CheckoutTokenRequest'], options?: CallOptions): Promise<Schemas['OneTimeToken']>;
  };
  /** Server-side one-time tokens (PCI-certified organizations only). */
  tokens: {
    create(body: Schemas['CreateTokenRequest'], options?: CallOptions): Promise<Schemas['OneTimeToken']>;
  };
  /** Customer sessions: the hosted form enrolls a card for a customer without the merchant seeing it. */
  customerSessions: {
    create(body: Schemas['CustomerSessionCreateRequest'], options?: CallOptions): Promise<Schemas['CustomerSession']>;
    /** What the hosted form calls (public key alone): the card is vaulted for the session's customer. */
    enrollPaymentMethod(customerSession: string, body: Schemas['CustomerSessionEnrollRequest'], options?: CallOptions): Promise<Schemas['EnrolledPaymentMethod']>;
  };
  /** Payment links: pages payorch hosts (`checkout_url`) where a shopper pays by card. */
  paymentLinks: {
    create(body: Schemas['PaymentLinkCreateRequest'], options?: CallOptions): Promise<Schemas['PaymentLink']>;
    retrieve(code: string, options?: CallOptions): Promise<Schemas['PaymentLink']>;
    /** The link takes no more payments; 409 `INVALID_STATUS` when it is PAID or EXPIRED. */
    cancel(code: string, options?: CallOptions): Promise<Schemas['PaymentLink']>;
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
      retrieve: (customer_id, options) => unwrap(client.GET('/customers/{customer_id}', { params: { path: { customer_id } }, signal: options?.signal })),
      retrieveWithEtag: async (customer_id, options) => {
        const answer = await client.GET('/customers/{customer_id}', { params: { path: { customer_id } }, signal: options?.signal });
        const customer = await unwrap<Schemas['Customer']>(Promise.resolve(answer));
        return { customer, etag: answer.response.headers.get('etag') ?? '' };
      },
      retrieveByMerchantCustomerId: (merchant_customer_id, options) =>
        unwrap(client.GET('/customers', { params: { query: { merchant_customer_id } }, signal: options?.signal })),
      update: (customer_id, body, options) =>
        unwrap(
          client.PATCH('/customers/{customer_id}', {
            params: { path: { customer_id }, header: options?.ifMatch === undefined ? undefined : { 'If-Match': options.ifMatch } },
            body: body as never,
            signal: options?.signal,
          }),
        ),
      delete: async (customer_id, options) => {
        await unwrap(client.DELETE('/customers/{customer_id}', { params: { path: { customer_id } }, signal: options?.signal }));
      },
      list: (query, options) => {
        const get = (q: ListCustomersQuery | undefined) => unwrap<Schemas['CustomerList']>(client.GET('/customers/list', { params: { query: q }, signal: options?.signal }));
        return paged(get(query), (starting_after) => get({ ...query, starting_after }), (p) => p.customers);
      },
    },
    paymentMethods: {
      enroll: (customer_id, body, options) =>
        unwrap(client.POST('/customers/{customer_id}/payment-methods', { params: { path: { customer_id }, header: keyHeader(options) }, body, signal: options?.signal })),
      list: (customer_id, query, options) => {
        const get = (q: ListPaymentMethodsQuery | undefined) =>
          unwrap<Schemas['PaymentMethodList']>(client.GET('/customers/{customer_id}/payment-methods', { params: { path: { customer_id }, query: q }, signal: options?.signal }));
        return paged(get(query), (starting_after) => get({ ...query, limit: query?.limit ?? 100, starting_after }), (p) => p.payment_methods);
      },
      retrieve: (customer_id, payment_method_id, options) =>
        unwrap(client.GET('/customers/{customer_id}/payment-methods/{payment_method_id}', { params: { path: { customer_id, payment_method_id } }, signal: options?.signal })),
      unenroll: (customer_id, payment_method_id, options) =>
        unwrap(
          client.POST('/customers/{customer_id}/payment-methods/{payment_method_id}/unenroll', {
            params: { path: { customer_id, payment_method_id }, header: keyHeader(options) },
            signal: options?.signal,
          }),
        ),
    },
    payments: {
      // `as never`: openapi-fetch's Writable<> turns a property typed `null` (additional_data.order.fulfillment)
      // into `never`, so the spec's own request type is not assignable; the public signature keeps the spec's type.
      create: (body, options) => unwrap(client.POST('/payments', { params: { header: keyHeader(options) }, body: body as never, signal: options?.signal })),
      retrieve: (payment_id, query, options) => unwrap(client.GET('/payments/{payment_id}', { params: { path: { payment_id }, query }, signal: options?.signal })),
      capture: (paymentId, transactionId, body = {}, options) =>
        // `as never`: as for create (additional_data.order.fulfillment is typed `null`).
        unwrap(client.POST('/payments/{payment_id}/transactions/{transaction_id}/capture', { ...dispute(paymentId, transactionId, options), body: body as never })),
      cancel: (paymentId, transactionId, body = {}, options) =>
        unwrap(client.POST('/payments/{payment_id}/transactions/{transaction_id}/cancel', { ...dispute(paymentId, transactionId, options), body })),
      refund: (paymentId, transactionId, body = {}, options) =>
        unwrap(client.POST('/payments/{payment_id}/transactions/{transaction_id}/refund', { ...dispute(paymentId, transactionId, options), body })),
      cancelOrRefund: (payment_id, body = {}, options) =>
        unwrap(
          client.POST('/payments/{payment_id}/cancel-or-refund', { params: { path: { payment_id }, header: keyHeader(options) }, body, signal: options?.signal }),
        ),
      list: (query, options) => {
        const get = (q: ListPaymentsQuery | undefined) => unwrap<Schemas['PaymentList']>(client.GET('/payments', { params: { query: q }, signal: options?.signal }));
        return paged(get(query), (starting_after) => get({ ...query, starting_after }), (p) => p.payments);
      },
    },
    events: {
      list: (query, options) => {
        const get = (q: ListEventsQuery | undefined) => unwrap<Schemas['EventList']>(client.GET('/events', { params: { query: q }, signal: options?.signal }));
        return paged(get(query), (starting_after) => get({ ...query, starting_after }), (p) => p.events);
      },
      retrieve: (event_id, options) => unwrap(client.GET('/events/{event_id}', { params: { path: { event_id } }, signal: options?.signal })),
    },
    webhookEndpoints: {
      create: (body, options) => unwrap(client.POST('/webhook-endpoints', { body, signal: options?.signal })),
      list: (query, options) => {
        const get = (q: ListWebhookEndpointsQuery | undefined) =>
          unwrap<Schemas['WebhookEndpointList']>(client.GET('/webhook-endpoints', { params: { query: q }, signal: options?.signal }));
        return paged(get(query), (starting_after) => get({ ...query, starting_after }), (p) => p.webhook_endpoints);
      },
      retrieve: (webhook_endpoint_id, options) =>
        unwrap(client.GET('/webhook-endpoints/{webhook_endpoint_id}', { params: { path: { webhook_endpoint_id } }, signal: options?.signal })),
      update: (webhook_endpoint_id, body, options) =>
        unwrap(client.PATCH('/webhook-endpoints/{webhook_endpoint_id}', { params: { path: { webhook_endpoint_id } }, body, signal: options?.signal })),
      delete: async (webhook_endpoint_id, options) => {
        await unwrap(client.DELETE('/webhook-endpoints/{webhook_endpoint_id}', { params: { path: { webhook_endpoint_id } }, signal: options?.signal }));
      },
      rotateSecret: (webhook_endpoint_id, body, options) =>
        unwrap(client.POST('/webhook-endpoints/{webhook_endpoint_id}/rotate-secret', { params: { path: { webhook_endpoint_id } }, body: body as never, signal: options?.signal })),
    },
    webhooks: {
      list: (query, options) => unwrap(client.GET('/webhooks', { params: { query }, signal: options?.signal })),
      create: (body, options) => unwrap(client.POST('/webhooks', { body, signal: options?.signal })),
      retrieve: (webhook_id, account_id, options) =>
        unwrap(client.GET('/webhooks/{webhook_id}', { params: { path: { webhook_id }, query: { account_id } }, signal: options?.signal })),
      update: (webhook_id, body, options) => unwrap(client.PATCH('/webhooks/{webhook_id}', { params: { path: { webhook_id } }, body, signal: options?.signal })),
      delete: (webhook_id, account_id, options) =>
        unwrap(client.DELETE('/webhooks/{webhook_id}', { params: { path: { webhook_id }, query: { account_id } }, signal: options?.signal })),
    },
    webhookDeliveries: {
      list: (webhook_endpoint_id, query, options) => {
        const get = (q: ListWebhookDeliveriesQuery | undefined) =>
          unwrap<Schemas['WebhookDeliveryList']>(
            client.GET('/webhook-endpoints/{webhook_endpoint_id}/deliveries', { params: { path: { webhook_endpoint_id }, query: q }, signal: options?.signal }),
          );
        return paged(get(query), (starting_after) => get({ ...query, starting_after }), (p) => p.deliveries);
      },
      retrieve: (webhook_endpoint_id, delivery_id, options) =>
        unwrap(
          client.GET('/webhook-endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}', { params: { path: { webhook_endpoint_id, delivery_id } }, signal: options?.signal }),
        ),
      redeliver: (webhook_endpoint_id, delivery_id, options) =>
        unwrap(
          client.POST('/webhook-endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}/redeliver', {
            params: { path: { webhook_endpoint_id, delivery_id } },
            signal: options?.signal,
          }),
        ),
    },
    routing: {
      create: (body, options) => unwrap(client.POST('/routing', { params: { header: keyHeader(options) }, body, signal: options?.signal })),
      list: (query, options) => unwrap(client.GET('/routing', { params: { query }, signal: options?.signal })),
      retrieve: (routing_id, options) => unwrap(client.GET('/routing/{routing_id}', { params: { path: { routing_id } }, signal: options?.signal })),
      update: (routing_id, body, options) => unwrap(client.PATCH('/routing/{routing_id}', { params: { path: { routing_id } }, body, signal: options?.signal })),
    },
    connections: {
      create: (body, options) => unwrap(client.POST('/connections', { params: { header: keyHeader(options) }, body, signal: options?.signal })),
      list: (options) => unwrap(client.GET('/connections', { signal: options?.signal })),
      delete: async (connection_id, options) => {
        await unwrap(client.DELETE('/connections/{connection_id}', { params: { path: { connection_id } }, signal: options?.signal }));
      },
      update: (connection_id, body, options) =>
        unwrap(client.PATCH('/connections/{connection_id}', { params: { path: { connection_id } }, body, signal: options?.signal })),
    },
    checkoutSessions: {
      create: (body, options) => unwrap(client.POST('/checkout/sessions', { body, signal: options?.signal })),
      retrieve: (checkout_session, options) =>
        unwrap(client.GET('/checkout/sessions/{checkout_session}', { params: { path: { checkout_session } }, signal: options?.signal })),
      update: (checkout_session, body, options) =>
        unwrap(client.PATCH('/checkout/sessions/{checkout_session}', { params: { path: { checkout_session } }, body, signal: options?.signal })),
      paymentMethods: (checkout_session, options) =>
        unwrap(client.GET('/checkout/sessions/{checkout_session}/payment-methods', { params: { path: { checkout_session } }, signal: options?.signal })),
      createToken: (checkout_session, body, options) =>
        unwrap(client.POST('/checkout/sessions/{checkout_session}/token', { params: { path: { checkout_session } }, body, signal: options?.signal })),
    },
    tokens: {
      create: (body, options) => unwrap(client.POST('/tokens', { body, signal: options?.signal })),
    },
    customerSessions: {
      create: (body, options) => unwrap(client.POST('/customers/sessions', { body, signal: options?.signal })),
      enrollPaymentMethod: (customer_session, body, options) =>
        unwrap(client.POST('/customers/sessions/{customer_session}/payment-methods', { params: { path: { customer_session } }, body, signal: options?.signal })),
    },
    paymentLinks: {
      create: (body, options) => unwrap(client.POST('/payment-links', { body, signal: options?.signal })),
      retrieve: (code, options) => unwrap(client.GET('/payment-links/{code}', { params: { path: { code } }, signal: options?.signal })),
      cancel: (code, options) => unwrap(client.POST('/payment-links/{code}/cancel', { params: { path: { code } }, signal: options?.signal })),
    },
    providers: {
      list: (options) => unwrap(client.GET('/providers', { signal: options?.signal })),
    },
    sandbox: {
      createChargeback: (payment_id, body, options) =>
        unwrap(client.POST('/sandbox/payments/{payment_id}/chargebacks', { params: { path: { payment_id } }, body: (body ?? {}) as never, signal: options?.signal })),
      resolveDispute: (payment_id, body, options) =>
        unwrap(client.POST('/sandbox/payments/{payment_id}/disputes/resolve', { params: { path: { payment_id } }, body, signal: options?.signal })),
      settlePendingPayment: (payment_id, body, options) =>
        unwrap(client.POST('/sandbox/payments/{payment_id}/outcome', { params: { path: { payment_id } }, body, signal: options?.signal })),
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
