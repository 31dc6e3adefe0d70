/**
 * @payorch/client: a typed client for the payorch API, generated from the same spec as the server
 * (openapi-fetch + @payorch/types). Runs anywhere `fetch` and WebCrypto exist: Node ≥ 20, browsers,
 * Deno, Bun. Node-only helpers (file paths) live in `@payorch/client/node`.
 */
export type { paths, components, operations, Problem, Schemas, WebhookEvent, WebhookEventMap, WebhookEventType } from '@payorch/types';

export {
  createPayorchClient,
  createPayorchAdminClient,
  DEFAULTS,
  type PayorchClient,
  type PayorchAdminClient,
  type PayorchClientOptions,
  type PayorchAdminClientOptions,
  type TransportOptions,
} from './client.js';
export {
  createResources,
  createAdminResources,
  type PayorchResources,
  type PayorchAdminResources,
  type CallOptions,
  type IdempotentCallOptions,
  type ListPaymentMethodsQuery,
  type GetPaymentQuery,
  type ListCustomersQuery,
  type ListPaymentsQuery,
  type ListEventsQuery,
  type ListWebhookEndpointsQuery,
  type ListWebhookDeliveriesQuery,
  type UpdateCallOptions,
} from './resources.js';
export { type Paged } from './pagination.js';
export { PayorchError, PayorchConnectionError, type PayorchErrorCode, type ProblemFieldError } from './errors.js';
export { credentialsMiddleware, headersMiddleware, idempotencyKeyMiddleware, newIdempotencyKey } from './middleware.js';
export { IDEMPOTENCY_HEADER, IDEMPOTENT_ROUTES, type PayorchPaths, type AdminPaths, type IdempotentRoute, type WithOptionalIdempotencyKey } from './paths.js';
export { retryingFetch, backoffDelay, parseRetryAfter, MAX_RETRY_AFTER_MS, type FetchLike, type RetryPolicy } from './retry.js';
export {
  evidenceFromBytes,
  evidenceFromBlob,
  checkEvidenceBytes,
  checkEvidenceFileName,
  MAX_EVIDENCE_BYTES,
  PayorchEvidenceError,
  type DisputeEvidence,
  type DisputeEvidenceCategory,
  type EvidenceOptions,
} from './evidence.js';
export { verifyWebhook, signWebhook, WebhookVerificationError, type WebhookHeaders, type VerifyWebhookOptions } from './webhooks.js';
