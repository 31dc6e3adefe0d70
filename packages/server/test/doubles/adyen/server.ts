/**
 * A local double of Adyen for the connector tests: plain node:http on loopback (ephemeral port), answering the
 * subset of Checkout v72 and Disputes v30 the ADYEN adapter calls, in Adyen's published shapes and at Adyen's
 * paths (/v72/payments, /v72/payments/{pspReference}/captures|cancels|reversals|refunds,
 * /ca/services/DisputeService/v30/…).
 *
 * - Every request is judged against Adyen's own OpenAPI schemas (schemas.ts, when the reference files are
 *   there): an invalid one gets a 422 validation error in Adyen's ServiceError shape and is counted
 *   (`invalidRequests`: the tests assert none arrived).
 * - Its ledger enforces amounts: captures up to what is authorised and not captured, refunds up to what is
 *   captured and not refunded, cancels of uncaptured authorisations only.
 * - Idempotency as Adyen documents it: a key already processed (on any endpoint: keys are unique per company
 *   account) is answered with the first answer, never processed twice. A request refused as invalid is not
 *   stored (nothing was processed), so a card-less lookup replay of an unknown key leaves no trace.
 * - Behaviours queued by the test (`next`): refuse with a refusal reason code (and merchant advice code), an
 *   Error result, no answer (processed, held until the client gives up or the double closes), a late answer,
 *   HTTP 500 (nothing processed), another HTTP status with a ServiceError (nothing processed), an oversized
 *   answer (processed), or a request lost on the way (nothing processed, no answer).
 * - Disputes (`openDispute`): Undefended, Pending once defended (no more documents, no second defense), closed
 *   by `closeDispute` (nothing more taken): refused as the Disputes API refuses, `success: false`.
 * - The request log redacts card data (the number keeps its last four digits) and never keeps the API key.
 * - PIX, boleto and OXXO (`paymentMethod.type` pix / boletobancario / oxxo), as Adyen's API-only integration
 *   of each documents them: in BRL (MXN for OXXO), with the payer details each requires (boleto: shopperName,
 *   socialSecurityNumber, billingAddress; OXXO: shopperName, shopperEmail), answered `Pending` with a `qrCode`
 *   action (PIX) or `PresentToShopper` with a `voucher` action (the boleto's typed line as its reference, its
 *   last day as a local `expiresAt`). The shopper pays (or not) later: `settleAsync`, then the test sends the
 *   AUTHORISATION / OFFER_CLOSED notification Adyen would.
 * - `signedNotification` builds a standard notification for a payment, HMAC-signed per item as Adyen signs
 *   (computed here with node:crypto, independently of the SDK's validator), checked against Webhooks-v1.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adyenSchemas, type RequestOperation } from './schemas.js';
import { pixCode } from '../pix-code.js';
import { referenceDigits } from '../reference-digits.js';

/** Adyen's published refusal reasons (refusalReason text by refusalReasonCode), as the double answers them. */
export const REFUSAL_REASONS: Readonly<Record<string, string>> = {
  '2': 'Refused', '3': 'Referral', '4': 'Acquirer Error', '5': 'Blocked Card', '6': 'Expired Card', '7': 'Invalid Amount',
  '8': 'Invalid Card Number', '9': 'Issuer Unavailable', '10': 'Not supported', '11': '3D Not Authenticated',
  '12': 'Not enough balance', '14': 'Acquirer Fraud', '15': 'Cancelled', '16': 'Shopper Cancelled', '20': 'FRAUD',
  '21': 'Not Submitted', '22': 'FRAUD-CANCELLED', '23': 'Transaction Not Permitted', '24': 'CVC Declined',
  '25': 'Restricted Card', '26': 'Revocation Of Auth', '27': 'Declined Non Generic', '28': 'Withdrawal amount exceeded',
  '29': 'Withdrawal count exceeded', '31': 'Issuer Suspected Fraud', '32': 'AVS Declined', '38': 'Authentication required',
  '46': 'Transaction blocked by Adyen to prevent excessive retry fees',
};

const MERCHANT_ADVICE: Readonly<Record<string, string>> = {
  '01': '01: New account information available',
  '02': '02: Cannot approve at this time, try again later',
  '03': '03: Do not try again',
  '21': '21: Payment Cancellation',
};

export type Behaviour =
  | { kind: 'refuse'; code: string; advice?: string; resultCode?: 'Refused' | 'Cancelled' }
  | { kind: 'error'; code?: string }
  | { kind: 'resultCode'; resultCode: string }
  /** Processed and recorded; the answer never comes (held until the client gives up). */
  | { kind: 'timeout' }
  /** Processed; answered after `ms`. */
  | { kind: 'late'; ms: number }
  /** HTTP 500, nothing processed. */
  | { kind: 'fail' }
  /** Processed; answered with a JSON body of `bytes` (default 100 KiB). */
  | { kind: 'oversized'; bytes?: number }
  /** Lost on the way: nothing processed, never answered. */
  | { kind: 'lost' }
  /** HTTP `status` with Adyen's ServiceError (errorCode default 000), nothing processed: e.g. 422 a validation error, 422 704 its idempotency "in progress", 429. */
  | { kind: 'status'; status: number; errorCode?: string };

export interface RecordedRequest {
  method: string;
  path: string;
  operation: RequestOperation | null;
  idempotencyKey: string | null;
  /** The body, card number and security code redacted. */
  body: unknown;
  status: number;
  schemaErrors: string[];
}

export interface LedgerPayment {
  pspReference: string;
  reference: string;
  merchantAccount: string;
  currency: string;
  /** Minor units. */
  authorised: number;
  captured: number;
  refunded: number;
  cancelled: boolean;
  /** Reversed (/reversals): cancelled when nothing was captured, else refunded in full. */
  reversed: boolean;
  manualCapture: boolean;
  resultCode: string;
  /** Adyen's paymentMethod.type of a PIX, boleto or OXXO payment (undefined for a card). */
  method?: AsyncType;
  /** The request as received (a PIX, boleto or OXXO payment's: what the payer details reached Adyen as). */
  request?: Record<string, unknown>;
  /** The action the shopper was shown (PIX, boleto, OXXO). */
  action?: Record<string, unknown>;
}

export type AsyncType = 'pix' | 'boletobancario' | 'oxxo';
/** How a PIX, boleto or OXXO payment ends at Adyen: paid (authorised and captured), refused, or expired / cancelled unpaid. */
export type AsyncEnd = 'paid' | 'refused' | 'expired' | 'cancelled';

/** Adyen's disputeStatus: Undefended until defended (then Pending, awaiting the decision), or closed. */
export type DisputeStatus = 'Undefended' | 'Pending' | 'Won' | 'Lost' | 'Accepted' | 'Expired';

export interface Dispute {
  disputePspReference: string;
  paymentPspReference: string;
  documents: { defenseDocumentTypeCode: string; contentType: string; bytes: number }[];
  defenseReasonCode: string | null;
  status: DisputeStatus;
}

/** Credentials of the double's one merchant account (a connection to it uses them; the HMAC key is hex, as Adyen's). */
export const ADYEN_TEST_CREDENTIALS = {
  api_key: 'AQEyhmfxK4_test_api_key_for_the_double_0123456789',
  merchant_account: 'PayorchTestECOM',
  hmac_key: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
} as const;

export interface AdyenDoubleOptions {
  apiKey: string;
  merchantAccount: string;
  /** Hex HMAC key of the notifications this double signs. */
  hmacKey: string;
}

export interface SignedNotification {
  body: string;
  headers: Record<string, string>;
  schemaErrors: string[];
}

export interface AdyenDouble {
  url: string;
  requests: RecordedRequest[];
  invalidRequests(): RecordedRequest[];
  /** Notifications built by signedNotification whose shape Adyen's webhook schema refuses. */
  invalidNotifications: { eventCode: string; errors: string[] }[];
  /** Applies `behaviour` to the next request(s) for `operation` (default payments), `times` times. */
  next(behaviour: Behaviour, options?: { operation?: RequestOperation; times?: number }): void;
  payments: Map<string, LedgerPayment>;
  paymentByReference(reference: string): LedgerPayment | undefined;
  /** How many /payments requests carried this reference and were processed (a replay is not processed). */
  processedCount(reference: string): number;
  /** Opens a dispute on a payment (as an issuer's chargeback would): its disputePspReference. */
  openDispute(paymentPspReference: string): string;
  disputes: Map<string, Dispute>;
  /**
   * Closes a dispute at Adyen (decided, accepted, or its defense period over) without telling anyone: the
   * notification is the test's to send. Its Disputes API calls are then answered `success: false`.
   */
  closeDispute(disputePspReference: string, status: 'Won' | 'Lost' | 'Accepted' | 'Expired'): void;
  signedNotification(eventCode: string, target: NotificationTarget, options?: NotificationOptions): SignedNotification;
  /** Ends a waiting PIX, boleto or OXXO payment as Adyen would (the notification is the test's to send). */
  settleAsync(pspReference: string, end: AsyncEnd): LedgerPayment;
  /** Decides a card payment answered Received / Pending as Adyen would later (the AUTHORISATION notification is the test's to send). */
  settleCard(pspReference: string, end: 'authorised' | 'refused'): LedgerPayment;
  close(): Promise<void>;
}

export interface NotificationTarget {
  /** The item's pspReference (the modification's or the dispute's; the payment's for AUTHORISATION). */
  pspReference: string;
  /** The payment's pspReference, for modifications and disputes. */
  originalReference?: string;
  merchantReference: string;
  /** Minor units. */
  value: number;
  currency: string;
}

export interface NotificationOptions {
  success?: boolean;
  reason?: string;
  additionalData?: Record<string, string>;
  /** Sign with another key (a wrong signature); `null` sends no hmacSignature. */
  hmacKey?: string | null;
  eventDate?: string;
  /** The item's paymentMethod (default visa): pix, boletobancario, oxxo for those payments. */
  paymentMethod?: string;
}

const pspReference = () => randomBytes(8).toString('hex').toUpperCase().replace(/[^0-9A-Z]/g, '0').slice(0, 16);

/** The HMAC Adyen puts in additionalData.hmacSignature (its documented signing string; base64 of HMAC-SHA256). */
export function adyenItemSignature(item: { pspReference: string; originalReference?: string; merchantAccountCode: string; merchantReference: string; amount: { value: number; currency: string }; eventCode: string; success: string }, hexKey: string): string {
  const data = [item.pspReference, item.originalReference ?? '', item.merchantAccountCode, item.merchantReference, item.amount.value, item.amount.currency, item.eventCode, item.success].join(':');
  return createHmac('sha256', Buffer.from(hexKey, 'hex')).update(data, 'utf8').digest('base64');
}

export async function startAdyenDouble(credentials: { api_key: string; merchant_account: string; hmac_key: string } = ADYEN_TEST_CREDENTIALS): Promise<AdyenDouble> {
  const options: AdyenDoubleOptions = { apiKey: credentials.api_key, merchantAccount: credentials.merchant_account, hmacKey: credentials.hmac_key };
  const schemas = adyenSchemas();
  const requests: RecordedRequest[] = [];
  const invalidNotifications: AdyenDouble['invalidNotifications'] = [];
  const queue: { operation: RequestOperation; behaviour: Behaviour; left: number }[] = [];
  const payments = new Map<string, LedgerPayment>();
  const disputes = new Map<string, Dispute>();
  const stored = new Map<string, { status: number; body: Record<string, unknown> }>();
  const processed = new Map<string, number>();
  const held = new Set<ServerResponse>();

  const take = (operation: RequestOperation): Behaviour | undefined => {
    const i = queue.findIndex((q) => q.operation === operation);
    if (i < 0) return undefined;
    const q = queue[i]!;
    if (--q.left <= 0) queue.splice(i, 1);
    return q.behaviour;
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, { status: 500, errorCode: '000', message: 'double failure', errorType: 'internal' });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '').split('?')[0]!;
    const route = routeOf(req.method ?? '', path);
    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    const record: RecordedRequest = { method: req.method ?? '', path, operation: route?.operation ?? null, idempotencyKey: key, body: redact(body), status: 0, schemaErrors: [] };
    requests.push(record);
    const reply = (status: number, out: Record<string, unknown>) => {
      record.status = status;
      send(res, status, out);
    };
    if (!route) return reply(404, { status: 404, errorCode: '000', message: 'Not found', errorType: 'validation' });
    if (req.headers['x-api-key'] !== options.apiKey) return reply(401, { status: 401, errorCode: '000', message: 'HTTP Status Response - Unauthorized', errorType: 'security' });
    record.schemaErrors = body === undefined ? ['the body is not JSON'] : (schemas?.request(route.operation, body) ?? []);
    if (key !== null && key.length > 64) record.schemaErrors.push('Idempotency-Key longer than 64 characters');
    if (body !== undefined) record.schemaErrors.push(...documentedLimits(route.operation, body as Record<string, unknown>));
    if (record.schemaErrors.length > 0) return reply(422, { status: 422, errorCode: '702', message: `Structure of request is invalid: ${record.schemaErrors[0]}`, errorType: 'validation' });
    const b = body as Record<string, unknown>;
    const account = (b.merchantAccount ?? b.merchantAccountCode) as string;
    if (account !== options.merchantAccount) return reply(403, { status: 403, errorCode: '901', message: 'Invalid Merchant Account', errorType: 'security' });
    // A key processed before: its first answer, on whichever endpoint it came.
    const replay = key !== null ? stored.get(key) : undefined;
    if (replay) return reply(replay.status, replay.body);

    // Adyen refuses a card payment without the card before anything else: nothing processed, nothing stored.
    const method = b.paymentMethod as Record<string, unknown> | undefined;
    const asyncType = ASYNC_TYPES.has(String(method?.type)) ? (String(method!.type) as AsyncType) : null;
    if (route.operation === 'payments' && asyncType) {
      const refusal = asyncRefusal(asyncType, b);
      if (refusal) return reply(422, { status: 422, errorCode: refusal.code, message: refusal.message, errorType: 'validation' });
    } else if (route.operation === 'payments' && (typeof method?.number !== 'string' || method.number === '')) {
      return reply(422, { status: 422, errorCode: '000', message: 'Required field "number" is not provided', errorType: 'validation' });
    }
    const behaviour = take(route.operation);
    if (behaviour?.kind === 'lost') return hold(res);
    if (behaviour?.kind === 'fail') return reply(500, { status: 500, errorCode: '000', message: 'An unexpected error occurred', errorType: 'internal' });
    if (behaviour?.kind === 'status') return reply(behaviour.status, { status: behaviour.status, errorCode: behaviour.errorCode ?? '000', message: 'Refused by the double', errorType: behaviour.status === 422 ? 'validation' : 'security' });
    const answer = processRequest(route, b, behaviour);
    if (answer.store && key !== null) stored.set(key, { status: answer.status, body: answer.body });
    if (behaviour?.kind === 'timeout') return hold(res);
    if (behaviour?.kind === 'oversized') {
      record.status = answer.status;
      return send(res, answer.status, { ...answer.body, padding: 'x'.repeat(behaviour.bytes ?? 100 * 1024) });
    }
    if (behaviour?.kind === 'late') {
      await new Promise((r) => setTimeout(r, behaviour.ms));
      if (res.destroyed) return;
    }
    reply(answer.status, answer.body);
  }

  function hold(res: ServerResponse): void {
    held.add(res);
    res.on('close', () => held.delete(res));
  }

  type Answer = { status: number; body: Record<string, unknown>; store: boolean };

  function processRequest(route: Route, b: Record<string, unknown>, behaviour: Behaviour | undefined): Answer {
    switch (route.operation) {
      case 'payments':
        return pay(b, behaviour);
      case 'captures':
      case 'cancels':
      case 'reversals':
      case 'refunds':
        return modify(route.operation, route.pspReference!, b);
      default:
        return dispute(route.operation, b);
    }
  }

  function pay(b: Record<string, unknown>, behaviour: Behaviour | undefined): Answer {
    const amount = b.amount as { currency: string; value: number };
    const reference = String(b.reference);
    processed.set(reference, (processed.get(reference) ?? 0) + 1);
    const psp = pspReference();
    const base = { pspReference: psp, merchantReference: reference, amount };
    const type = String((b.paymentMethod as { type?: unknown } | undefined)?.type);
    if (behaviour?.kind === 'refuse') {
      const additionalData: Record<string, string> = { refusalReasonRaw: `${behaviour.code} : ${REFUSAL_REASONS[behaviour.code] ?? 'Refused'}` };
      if (behaviour.advice) additionalData.merchantAdviceCode = MERCHANT_ADVICE[behaviour.advice] ?? `${behaviour.advice}: advice`;
      return { status: 200, body: { ...base, resultCode: behaviour.resultCode ?? 'Refused', refusalReason: REFUSAL_REASONS[behaviour.code] ?? 'Refused', refusalReasonCode: behaviour.code, additionalData }, store: true };
    }
    if (behaviour?.kind === 'error') {
      const code = behaviour.code ?? '4';
      return { status: 200, body: { ...base, resultCode: 'Error', refusalReason: REFUSAL_REASONS[code] ?? 'Acquirer Error', refusalReasonCode: code }, store: true };
    }
    if (behaviour?.kind === 'resultCode') {
      // A card payment Adyen has not decided (Received, Pending): kept waiting, nothing authorised until settleCard.
      if (behaviour.resultCode === 'Received' || behaviour.resultCode === 'Pending') {
        const manualCapture = (b.additionalData as Record<string, string> | undefined)?.manualCapture === 'true';
        payments.set(psp, {
          pspReference: psp, reference, merchantAccount: String(b.merchantAccount), currency: amount.currency, authorised: 0, captured: 0, refunded: 0,
          cancelled: false, reversed: false, manualCapture, resultCode: behaviour.resultCode, request: { amount },
        });
      }
      return { status: 200, body: { ...base, resultCode: behaviour.resultCode }, store: true };
    }
    if (ASYNC_TYPES.has(type)) return issueAsync(b, type as AsyncType, base);
    const manualCapture = (b.additionalData as Record<string, string> | undefined)?.manualCapture === 'true';
    payments.set(psp, {
      pspReference: psp,
      reference,
      merchantAccount: String(b.merchantAccount),
      currency: amount.currency,
      authorised: amount.value,
      captured: manualCapture || amount.value === 0 ? 0 : amount.value,
      refunded: 0,
      cancelled: false,
      reversed: false,
      manualCapture,
      resultCode: 'Authorised',
    });
    return {
      status: 200,
      body: { ...base, resultCode: 'Authorised', additionalData: { authCode: String(100000 + Math.floor(Math.random() * 899999)), cardIssuingCountry: 'NL', fundingSource: 'CREDIT' } },
      store: true,
    };
  }

  /**
   * A PIX code (`Pending`, action qrCode with the BR Code, Adyen's QR image URL and expiresAt) or a voucher
   * (`PresentToShopper`, action voucher: the boleto's typed line or the OXXO reference, the download URL, the
   * last day as a local expiresAt without offset), recorded as waiting: nothing authorised until settleAsync.
   */
  function issueAsync(b: Record<string, unknown>, type: AsyncType, base: { pspReference: string; merchantReference: string; amount: { currency: string; value: number } }): Answer {
    const psp = base.pspReference;
    const common = { paymentMethodType: type, initialAmount: base.amount, totalAmount: base.amount, merchantReference: base.merchantReference };
    let action: Record<string, unknown>;
    let resultCode: string;
    if (type === 'pix') {
      resultCode = 'Pending';
      action = {
        type: 'qrCode',
        paymentMethodType: 'pix',
        qrCodeData: pixCode({ amountMinor: base.amount.value, reference: psp, key: '3f1c9a7e-5b2d-4c8e-a1f0-adyen-double', merchantName: 'ADYEN DOUBLE' }),
        url: `https://test.adyen.com/hpp/generateQRCodeImage.shtml?url=${psp}`,
        expiresAt: new Date(Date.now() + 24 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      };
    } else if (type === 'boletobancario') {
      resultCode = 'PresentToShopper';
      // The due date asked for (deliveryDate), or Adyen's default, as the local day (Brasília) it falls on.
      const due = typeof b.deliveryDate === 'string' ? Date.parse(b.deliveryDate) : Date.now() + 5 * 86_400_000;
      const day = new Date(due - 3 * 3_600_000).toISOString().slice(0, 10);
      const name = b.shopperName as { firstName: string; lastName: string };
      action = {
        type: 'voucher',
        ...common,
        reference: boletoTypedLine(base.amount.value),
        downloadUrl: `https://test.adyen.com/hpp/generationBoleto.shtml?data=${psp}`,
        expiresAt: `${day}T00:00:00`,
        shopperName: `${name.firstName} ${name.lastName}`,
        ...(typeof b.shopperEmail === 'string' ? { shopperEmail: b.shopperEmail } : {}),
      };
    } else {
      resultCode = 'PresentToShopper';
      const day = new Date(Date.now() - 6 * 3_600_000 + 86_400_000).toISOString().slice(0, 10);
      const number = referenceDigits(14);
      const name = b.shopperName as { firstName: string; lastName: string };
      action = {
        type: 'voucher',
        ...common,
        reference: number,
        alternativeReference: number,
        merchantName: 'Payorch Test Store',
        downloadUrl: `https://test.adyen.com/hpp/generationOxxoVoucher.shtml?data=${psp}`,
        expiresAt: `${day}T00:00:00`,
        shopperName: `${name.firstName} ${name.lastName}`,
        shopperEmail: String(b.shopperEmail),
      };
    }
    payments.set(psp, {
      pspReference: psp,
      reference: base.merchantReference,
      merchantAccount: String(b.merchantAccount),
      currency: base.amount.currency,
      authorised: 0,
      captured: 0,
      refunded: 0,
      cancelled: false,
      reversed: false,
      manualCapture: false,
      resultCode,
      method: type,
      request: structuredClone(b),
      action,
    });
    return { status: 200, body: { ...base, resultCode, action }, store: true };
  }

  function modify(operation: 'captures' | 'cancels' | 'reversals' | 'refunds', paymentPsp: string, b: Record<string, unknown>): Answer {
    const p = payments.get(paymentPsp);
    const refuse = (message: string) => ({ status: 422, body: { status: 422, errorCode: '167', message, errorType: 'validation' }, store: false });
    if (!p) return refuse('Original pspReference required for this operation');
    const amount = b.amount as { currency: string; value: number } | undefined;
    if (amount && amount.currency !== p.currency) return refuse('Currency of modification does not match the payment');
    if (operation === 'captures') {
      if (!p.manualCapture || p.cancelled || p.captured > 0) return refuse('Payment cannot be captured');
      if (amount!.value <= 0 || amount!.value > p.authorised) return refuse('Capture amount exceeds the authorised amount');
      p.captured = amount!.value;
    } else if (operation === 'cancels') {
      if (p.cancelled || p.captured > 0) return refuse('Payment cannot be cancelled');
      p.cancelled = true;
    } else if (operation === 'reversals') {
      if (p.cancelled || p.reversed) return refuse('Payment cannot be reversed');
      p.reversed = true;
      if (p.captured === 0) p.cancelled = true;
      else p.refunded = p.captured;
    } else {
      if (amount!.value <= 0 || amount!.value > p.captured - p.refunded) return refuse('Refund amount exceeds what is left to refund');
      p.refunded += amount!.value;
    }
    const body: Record<string, unknown> = { merchantAccount: p.merchantAccount, paymentPspReference: p.pspReference, pspReference: pspReference(), status: 'received' };
    if (b.reference !== undefined) body.reference = b.reference;
    if (amount) body.amount = amount;
    return { status: 201, body, store: true };
  }

  function dispute(operation: RequestOperation, b: Record<string, unknown>): Answer {
    const d = disputes.get(String(b.disputePspReference));
    if (!d) return { status: 200, body: { disputeServiceResult: { success: false, errorMessage: 'Could not find dispute' } }, store: false };
    // A closed dispute takes nothing more; a defended one no more documents nor a second defense (Adyen answers
    // these with success false; the wording is the double's).
    const refused = (errorMessage: string): Answer => ({ status: 200, body: { disputeServiceResult: { success: false, errorMessage } }, store: false });
    if (d.status !== 'Undefended' && d.status !== 'Pending') return refused(`Dispute is closed (${d.status})`);
    if (d.status === 'Pending' && operation !== 'retrieveApplicableDefenseReasons') return refused('Dispute is already defended');
    if (operation === 'retrieveApplicableDefenseReasons') {
      return {
        status: 200,
        body: {
          defenseReasons: [
            {
              defenseReasonCode: 'GoodsOrServicesProvided',
              satisfied: false,
              defenseDocumentTypes: [
                { defenseDocumentTypeCode: 'GoodsDeliveredOrServicesRendered', requirementLevel: 'OneOrMore', available: false },
                { defenseDocumentTypeCode: 'TIDorInvoice', requirementLevel: 'Required', available: false },
              ],
            },
          ],
          disputeServiceResult: { success: true },
        },
        store: true,
      };
    }
    if (operation === 'supplyDefenseDocument') {
      for (const doc of b.defenseDocuments as { defenseDocumentTypeCode: string; contentType: string; content: string }[]) {
        d.documents.push({ defenseDocumentTypeCode: doc.defenseDocumentTypeCode, contentType: doc.contentType, bytes: Buffer.from(doc.content, 'base64').length });
      }
      return { status: 200, body: { disputeServiceResult: { success: true } }, store: true };
    }
    if (d.documents.length === 0) return { status: 200, body: { disputeServiceResult: { success: false, errorMessage: 'Required documents are missing' } }, store: false };
    d.defenseReasonCode = String(b.defenseReasonCode);
    d.status = 'Pending';
    return { status: 200, body: { disputeServiceResult: { success: true } }, store: true };
  }

  // A provider's edge keeps idle connections open far longer than our client does (fetch drops them after
  // the few seconds the Keep-Alive hint allows): with Node's 5 s default, a loaded run could reuse a socket
  // the double was closing at that instant, a CONNECTION_CUT no real provider would cause.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    invalidRequests: () => requests.filter((r) => r.schemaErrors.length > 0),
    invalidNotifications,
    next(behaviour, { operation = 'payments', times = 1 } = {}) {
      queue.push({ operation, behaviour, left: times });
    },
    payments,
    paymentByReference: (reference) => [...payments.values()].find((p) => p.reference === reference),
    processedCount: (reference) => processed.get(reference) ?? 0,
    openDispute(paymentPsp) {
      const id = pspReference();
      disputes.set(id, { disputePspReference: id, paymentPspReference: paymentPsp, documents: [], defenseReasonCode: null, status: 'Undefended' });
      return id;
    },
    disputes,
    closeDispute(id, status) {
      const d = disputes.get(id);
      if (!d) throw new Error(`no dispute ${id} at the double`);
      d.status = status;
    },
    settleAsync(psp, end) {
      const p = payments.get(psp);
      if (!p?.method) throw new Error(`no PIX, boleto or OXXO payment ${psp} at the double`);
      if (p.resultCode !== 'Pending' && p.resultCode !== 'PresentToShopper') throw new Error(`payment ${psp} ended already (${p.resultCode})`);
      const value = ((p.request?.amount ?? {}) as { value: number }).value;
      if (end === 'paid') {
        // Paid: authorised and captured at once (Adyen captures these methods automatically).
        p.resultCode = 'Authorised';
        p.authorised = value;
        p.captured = value;
      } else {
        p.resultCode = end === 'refused' ? 'Refused' : 'Cancelled';
        p.cancelled = end !== 'refused';
      }
      return p;
    },
    settleCard(psp, end) {
      const p = payments.get(psp);
      if (!p || p.method) throw new Error(`no card payment ${psp} at the double`);
      if (p.resultCode !== 'Received' && p.resultCode !== 'Pending') throw new Error(`payment ${psp} was decided already (${p.resultCode})`);
      const value = ((p.request?.amount ?? {}) as { value: number }).value;
      if (end === 'authorised') {
        p.resultCode = 'Authorised';
        p.authorised = value;
        p.captured = p.manualCapture ? 0 : value;
      } else {
        p.resultCode = 'Refused';
      }
      return p;
    },
    signedNotification(eventCode, target, opts = {}) {
      const signed = signedNotification(eventCode, target, { ...opts, merchantAccount: options.merchantAccount, hmacKey: opts.hmacKey === undefined ? options.hmacKey : opts.hmacKey });
      if (signed.schemaErrors.length > 0) invalidNotifications.push({ eventCode, errors: signed.schemaErrors });
      return signed;
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A standard Adyen notification (one item) for `target`, HMAC-signed as Adyen signs it, with the errors Adyen's
 * webhook schema finds in it (none expected). Needs no running double: what the notifications endpoint's tests
 * POST to /v1/provider-notifications/{connection_id} (body as is, headers as given).
 */
export function signedNotification(
  eventCode: string,
  target: NotificationTarget,
  opts: NotificationOptions & { merchantAccount?: string } = {},
): SignedNotification {
  const item: Record<string, unknown> & { additionalData: Record<string, string> } = {
    amount: { currency: target.currency, value: target.value },
    eventCode,
    eventDate: opts.eventDate ?? new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00'),
    merchantAccountCode: opts.merchantAccount ?? ADYEN_TEST_CREDENTIALS.merchant_account,
    merchantReference: target.merchantReference,
    ...(target.originalReference ? { originalReference: target.originalReference } : {}),
    paymentMethod: opts.paymentMethod ?? 'visa',
    pspReference: target.pspReference,
    ...(opts.reason ? { reason: opts.reason } : {}),
    success: opts.success === false ? 'false' : 'true',
    additionalData: { ...(opts.additionalData ?? {}) },
  };
  const key = opts.hmacKey === undefined ? ADYEN_TEST_CREDENTIALS.hmac_key : opts.hmacKey;
  if (key !== null) item.additionalData.hmacSignature = adyenItemSignature(item as never, key);
  const notification = { live: 'false', notificationItems: [{ NotificationRequestItem: item }] };
  return { body: JSON.stringify(notification), headers: { 'content-type': 'application/json' }, schemaErrors: adyenSchemas()?.notification(eventCode, notification) ?? [] };
}

const ASYNC_TYPES: ReadonlySet<string> = new Set<AsyncType>(['pix', 'boletobancario', 'oxxo']);

/**
 * What Adyen refuses of a PIX, boleto or OXXO request before processing it (HTTP 422, nothing stored): a
 * currency the method does not take, the payer details the method requires.
 */
function asyncRefusal(type: AsyncType, b: Record<string, unknown>): { code: string; message: string } | null {
  const currency = (b.amount as { currency?: string } | undefined)?.currency;
  const wanted = type === 'oxxo' ? 'MXN' : 'BRL';
  if (currency !== wanted) return { code: '000', message: `Currency ${String(currency)} is not supported for ${type}` };
  const required = (field: string) => ({ code: '000', message: `Required field '${field}' is not provided` });
  const name = b.shopperName as { firstName?: string; lastName?: string } | undefined;
  if (type !== 'pix' && (!name?.firstName || !name.lastName)) return required('shopperName');
  if (type === 'oxxo' && typeof b.shopperEmail !== 'string') return required('shopperEmail');
  if (type === 'boletobancario') {
    if (!/^(\d{11}|\d{14})$/.test(String(b.socialSecurityNumber ?? ''))) return { code: '000', message: "Invalid field 'socialSecurityNumber': a CPF (11 digits) or CNPJ (14 digits)" };
    const a = b.billingAddress as Record<string, string> | undefined;
    for (const field of ['street', 'houseNumberOrName', 'city', 'postalCode', 'stateOrProvince', 'country']) if (!a?.[field]) return required(`billingAddress.${field}`);
  }
  return null;
}


/**
 * A boleto's typed line (linha digitável) as Adyen's voucher reference shows it ("03399.33335 33823.303087
 * 98859.901015 8 83060000019193"): built from a 44-digit barcode (bank 033, currency 9, its check digit, due
 * factor and value, the free field), each of the three field blocks with its modulo-10 check digit.
 */
export function boletoTypedLine(amountMinor: number): string {
  const free = Array.from(randomBytes(25), (x) => String(x % 10)).join('');
  const factor = '9999';
  const value = String(amountMinor).padStart(10, '0');
  const withoutDv = `0339${factor}${value}${free}`;
  const dv = mod11(withoutDv);
  const barcode = `${withoutDv.slice(0, 4)}${dv}${withoutDv.slice(4)}`;
  const f1 = `${barcode.slice(0, 4)}${barcode.slice(19, 24)}`;
  const f2 = barcode.slice(24, 34);
  const f3 = barcode.slice(34, 44);
  const b1 = `${f1}${mod10(f1)}`;
  const b2 = `${f2}${mod10(f2)}`;
  const b3 = `${f3}${mod10(f3)}`;
  return `${b1.slice(0, 5)}.${b1.slice(5)} ${b2.slice(0, 5)}.${b2.slice(5)} ${b3.slice(0, 5)}.${b3.slice(5)} ${dv} ${barcode.slice(5, 19)}`;
}

function mod10(digits: string): number {
  let sum = 0;
  [...digits].reverse().forEach((d, i) => {
    const n = Number(d) * (i % 2 === 0 ? 2 : 1);
    sum += n > 9 ? n - 9 : n;
  });
  return (10 - (sum % 10)) % 10;
}

function mod11(digits: string): number {
  let sum = 0;
  [...digits].reverse().forEach((d, i) => (sum += Number(d) * (2 + (i % 8))));
  const r = 11 - (sum % 11);
  return r === 0 || r === 10 || r === 11 ? 1 : r;
}

interface Route {
  operation: RequestOperation;
  pspReference?: string;
}

function routeOf(method: string, path: string): Route | null {
  if (method !== 'POST') return null;
  if (path === '/v72/payments' || path === '/checkout/v72/payments') return { operation: 'payments' };
  const m = /^(?:\/checkout)?\/v72\/payments\/([^/]+)\/(captures|cancels|reversals|refunds)$/.exec(path);
  if (m) return { operation: m[2] as 'captures' | 'cancels' | 'reversals' | 'refunds', pspReference: decodeURIComponent(m[1]!) };
  const d = /^\/ca\/services\/DisputeService\/v30\/(retrieveApplicableDefenseReasons|supplyDefenseDocument|defendDispute)$/.exec(path);
  return d ? { operation: d[1] as RequestOperation } : null;
}

/** Limits Adyen states in its schemas' descriptions rather than as schema keywords. */
function documentedLimits(operation: RequestOperation, b: Record<string, unknown>): string[] {
  const errors: string[] = [];
  if (operation !== 'payments') return errors;
  const metadata = (b.metadata ?? {}) as Record<string, string>;
  if (Object.keys(metadata).length > 20) errors.push('/metadata more than 20 entries');
  for (const [k, v] of Object.entries(metadata)) if (k.length > 20 || String(v).length > 80) errors.push(`/metadata/${k} key over 20 or value over 80 characters`);
  if (typeof b.shopperStatement === 'string' && !/^[a-zA-Z0-9 .,'_\-?+*/]*$/.test(b.shopperStatement)) errors.push('/shopperStatement has characters Adyen does not allow');
  if (typeof b.captureDelayHours === 'number' && (b.captureDelayHours < 0 || b.captureDelayHours > 672)) errors.push('/captureDelayHours outside 0–672');
  return errors;
}

function send(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The body as the log keeps it: a card number as its last four digits, the security code never, documents by size. */
function redact(body: unknown): unknown {
  if (body === null || typeof body !== 'object') return body;
  const copy = structuredClone(body) as Record<string, unknown>;
  const method = copy.paymentMethod as Record<string, unknown> | undefined;
  if (method && typeof method.number === 'string') method.number = `****${method.number.slice(-4)}`;
  if (method && 'cvc' in method) method.cvc = '[REDACTED]';
  const docs = copy.defenseDocuments as { content?: string; bytes?: number }[] | undefined;
  for (const d of docs ?? []) {
    d.bytes = Buffer.from(d.content ?? '', 'base64').length;
    delete d.content;
  }
  return copy;
}
