/**
 * Adyen's own OpenAPI documents (Checkout v72, Disputes v30, standard notification webhooks), read at run time
 * from `../shared/provider-openapi/adyen/` beside the repository (never copied into it), compiled with Ajv
 * 2020 (OpenAPI 3.1 schemas are JSON Schema 2020-12): the double judges every request it receives, and every
 * notification it sends, by Adyen's published schemas. Absent files skip that judgement (a clone on its own);
 * in CI they are required, as the Yuno example tests require theirs.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../..');
export const ADYEN_OPENAPI_DIR = resolve(REPO_ROOT, '../shared/provider-openapi/adyen');

export function adyenFilesPresent(): boolean {
  if (existsSync(ADYEN_OPENAPI_DIR)) return true;
  if (process.env.CI) throw new Error(`${ADYEN_OPENAPI_DIR} is missing: CI validates the Adyen double against Adyen's OpenAPI documents`);
  return false;
}

export interface AdyenSchemas {
  /** The request schema's errors for an operation of the double ('' when valid), by Adyen's operation path. */
  request(operation: RequestOperation, body: unknown): string[];
  /** A notification body's errors against the webhook's schema for its eventCode. */
  notification(eventCode: string, body: unknown): string[];
  /** A /payments answer's errors against Checkout's PaymentResponse (how the tests judge the double's own answers). */
  paymentResponse(body: unknown): string[];
}

export type RequestOperation = 'payments' | 'captures' | 'cancels' | 'reversals' | 'refunds' | 'retrieveApplicableDefenseReasons' | 'supplyDefenseDocument' | 'defendDispute';

const REQUEST_SCHEMAS: Record<RequestOperation, string> = {
  payments: 'checkout#/components/schemas/PaymentRequest',
  captures: 'checkout#/components/schemas/PaymentCaptureRequest',
  cancels: 'checkout#/components/schemas/PaymentCancelRequest',
  reversals: 'checkout#/components/schemas/PaymentReversalRequest',
  refunds: 'checkout#/components/schemas/PaymentRefundRequest',
  retrieveApplicableDefenseReasons: 'disputes#/components/schemas/DefenseReasonsRequest',
  supplyDefenseDocument: 'disputes#/components/schemas/SupplyDefenseDocumentRequest',
  defendDispute: 'disputes#/components/schemas/DefendDisputeRequest',
};

let loaded: AdyenSchemas | null | undefined;

/** The compiled schemas, once per test process; null when the reference files are absent (outside CI). */
export function adyenSchemas(): AdyenSchemas | null {
  if (loaded !== undefined) return loaded;
  if (!adyenFilesPresent()) return (loaded = null);
  const read = (file: string) => JSON.parse(readFileSync(resolve(ADYEN_OPENAPI_DIR, file), 'utf8')) as Record<string, unknown>;
  const checkout = read('CheckoutService-v72.json');
  const disputes = read('DisputeService-v30.json');
  const webhooks = read('Webhooks-v1.json') as { webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }>; components: unknown };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  // Each document's components under an id, so their internal $refs (#/components/…) resolve there.
  ajv.addSchema({ $id: 'checkout', components: checkout.components });
  ajv.addSchema({ $id: 'disputes', components: disputes.components });
  ajv.addSchema({ $id: 'webhooks', components: webhooks.components });
  const compiled = new Map<string, ValidateFunction>();
  const validator = (ref: string) => {
    let v = compiled.get(ref);
    if (!v) compiled.set(ref, (v = ajv.compile({ $ref: ref })));
    return v;
  };
  const errorsOf = (v: ValidateFunction, body: unknown) => (v(body) ? [] : (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`));
  loaded = {
    request: (operation, body) => errorsOf(validator(REQUEST_SCHEMAS[operation]), body),
    paymentResponse: (body) => errorsOf(validator('checkout#/components/schemas/PaymentResponse'), body),
    notification: (eventCode, body) => {
      const hook = webhooks.webhooks[`/${eventCode}`];
      if (!hook) return [`Adyen publishes no webhook for eventCode ${eventCode}`];
      const ref = hook.post.requestBody.content['application/json']!.schema.$ref;
      // The generic NotificationRequest (OFFER_CLOSED, …) lists no hmacSignature in its additionalData, though
      // Adyen signs every item and its own OFFER_CLOSED example carries one: judged without it.
      const judged = ref === '#/components/schemas/NotificationRequest' ? withoutSignatures(body) : body;
      return errorsOf(validator(`webhooks${ref}`), judged);
    },
  };
  return loaded;
}

/** A notification body without each item's additionalData.hmacSignature (see notification above). */
function withoutSignatures(body: unknown): unknown {
  const copy = structuredClone(body) as { notificationItems?: { NotificationRequestItem?: { additionalData?: Record<string, unknown> } }[] };
  for (const wrapper of copy.notificationItems ?? []) {
    const extra = wrapper.NotificationRequestItem?.additionalData;
    if (!extra) continue;
    delete extra.hmacSignature;
    if (Object.keys(extra).length === 0) delete wrapper.NotificationRequestItem!.additionalData;
  }
  return copy;
}
