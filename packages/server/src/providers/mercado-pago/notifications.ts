/**
 * Mercado Pago notifications of one connection (POST /v1/provider-notifications/{connection_id}).
 *
 * Verified FIRST, with Mercado Pago's published scheme through the `mercadopago` package's own validator
 * (WebhookSignatureValidator): `x-signature: ts=…,v1=…` is HMAC-SHA256, keyed with the connection's
 * webhook_secret, over the manifest `id:{data.id};request-id:{x-request-id};ts:{ts};`, and a `ts` more than
 * five minutes from now is stale (a replay). Mercado Pago signs the `data.id` of the notification URL's
 * query; it is the body's `data.id`, which is what this endpoint has (the body is parsed only to read it).
 *
 * Then translated. A Mercado Pago notification carries ids, not the story: the details are fetched with
 * the connection's access token (after verification, so an unsigned request never makes us call out):
 * - `payment`: GET /v1/payments/{id}; a PIX or boleto payment in a final status → ASYNC_PAYMENT_SETTLED
 *   (approved → SUCCEEDED, rejected → DECLINED, cancelled → CANCELED or, at its deadline, EXPIRED:
 *   transformers.ts asyncOutcomeOf); a card payment approved or authorized → ATTEMPT_SETTLED SUCCEEDED for
 *   our attempt (its external_reference): what reverses a charge made after we recorded the attempt not
 *   processed or declined; each refund in a final state → FOLLOW_UP_SETTLED REFUND (approved →
 *   CONFIRMED, rejected/cancelled → FAILED). Captures and cancellations are synchronous at Mercado Pago:
 *   their answer was final, no event is needed.
 * - `topic_chargebacks_wh` (and the older `chargebacks`): GET /v1/chargebacks/{id}, then its payment (for our
 *   payment id, sent as metadata at creation) → CHARGEBACK; once decided, also DISPUTE_CLOSED (coverage
 *   applied → WON; documentation invalid or not supplied → LOST).
 * Any other type → no events (acknowledged). Event ids derive from Mercado Pago's ids and states, so a
 * re-delivery yields the same events (deduplicated where they are applied).
 */
import { InvalidWebhookSignatureError, MPForbiddenError, MPNotFoundError, WebhookSignatureValidator } from 'mercadopago';
import type { ConnectorEvent, ParsedNotification } from '../connector.js';
import { NotificationSignatureError, type ConnectionContext } from '../provider.js';
import type { ChargebackResponse, PaymentResponse } from './sdk-types.js';
import { asyncOutcomeOf, decimalOf, MERCADO_PAGO_ASYNC_IDS } from './transformers.js';

/** How far a notification's `ts` may be from now (seconds) before it is refused as a replay. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * The chargeback resource as Mercado Pago documents it (GET /v1/chargebacks/{id}): the package's
 * ChargebackResponse type names fewer fields (payment_id, currency_id) than the published reference does
 * (payments, currency, coverage and documentation status); both are read.
 */
export type MercadoPagoChargeback = ChargebackResponse & {
  payments?: (number | string)[];
  currency?: string;
  coverage_applied?: boolean | string;
  coverage_elegible?: boolean | string;
  documentation_required?: boolean | string;
  documentation_status?: 'pending' | 'review_pending' | 'valid' | 'invalid' | 'not_supplied' | 'not_applicable' | string;
  date_documentation_deadline?: string;
};

interface NotificationBody {
  id?: string | number;
  type?: string;
  topic?: string;
  action?: string;
  data?: { id?: string | number; payment_id?: string | number };
}

export interface NotificationFetcher {
  get<T>(path: string): Promise<T>;
}

/** Ids longer than a double holds exactly (chargeback ids are 18 digits) are read as text, never rounded. */
export function parseWithLongIds(rawBody: string): unknown {
  return JSON.parse(rawBody.replace(/("(?:id|payment_id)"\s*:\s*)(\d{16,})(?=\s*[,}])/g, '$1"$2"'));
}

export async function parseMercadoPagoNotification(
  rawBody: string,
  headers: Readonly<Record<string, string | undefined>>,
  connection: ConnectionContext,
  fetcher: NotificationFetcher,
): Promise<ParsedNotification> {
  const body = verify(rawBody, headers, connection);
  const type = body.type ?? body.topic;
  const dataId = idText(body.data?.id);
  try {
    if (type === 'payment' && dataId) return { events: await paymentEvents(dataId, fetcher) };
    if ((type === 'topic_chargebacks_wh' || type === 'chargebacks') && dataId) return { events: await chargebackEvents(dataId, body, rawBody, fetcher) };
  } catch (err) {
    // A resource this connection's account cannot see (another application's, or gone): nothing of ours to
    // apply, acknowledged. Anything else (Mercado Pago unreachable) is thrown: the delivery fails and is retried.
    if (err instanceof MPNotFoundError || err instanceof MPForbiddenError) return { events: [] };
    throw err;
  }
  return { events: [] };
}

function verify(rawBody: string, headers: Readonly<Record<string, string | undefined>>, connection: ConnectionContext): NotificationBody {
  const secret = connection.credentials.webhook_secret;
  if (!secret) throw new NotificationSignatureError('the connection has no webhook_secret');
  let body: NotificationBody;
  try {
    body = parseWithLongIds(rawBody) as NotificationBody;
  } catch {
    throw new NotificationSignatureError('the notification body is not JSON: it cannot be signed by Mercado Pago');
  }
  if (typeof body !== 'object' || body === null) throw new NotificationSignatureError('the notification body is not an object');
  const header = (name: string) => headers[name] ?? headers[name.toLowerCase()];
  const dataId = idText(body.data?.id);
  try {
    WebhookSignatureValidator.validate({
      xSignature: header('x-signature'),
      xRequestId: header('x-request-id'),
      // Mercado Pago lower-cases alphanumeric ids in the manifest.
      dataId: dataId?.toLowerCase(),
      secret,
      toleranceSeconds: SIGNATURE_TOLERANCE_SECONDS,
    });
  } catch (err) {
    if (err instanceof InvalidWebhookSignatureError) throw new NotificationSignatureError(`Mercado Pago signature refused: ${err.reason}`);
    throw err;
  }
  return body;
}

const idText = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : undefined);

async function paymentEvents(paymentId: string, fetcher: NotificationFetcher): Promise<ConnectorEvent[]> {
  const payment = await fetcher.get<PaymentResponse>(`/v1/payments/${encodeURIComponent(paymentId)}`);
  const currency = payment.currency_id ?? '';
  const events: ConnectorEvent[] = [];
  // A PIX or boleto payment in a final status ends the pending payment (one event per status: a re-delivery,
  // or a later notification of the same status after a refund, is the same event).
  const settled = asyncOutcomeOf(payment);
  if (settled) {
    const id = String(payment.id ?? paymentId);
    events.push({ kind: 'ASYNC_PAYMENT_SETTLED', notificationId: `mp_payment_${id}_${payment.status}`, providerTransactionId: id, outcome: settled.outcome, reason: settled.reason });
  }
  // A card payment approved (captured) or authorized: our attempt's outcome, by its external_reference. Usually
  // recorded already (the call's answer, or a lookup) and it changes nothing; but an attempt recorded ERROR /
  // NOT_PROCESSED (Mercado Pago's search lagged past the settle window, or the payment was still processing)
  // or DECLINED, then charged, is reversed as a late approval (payments/provider-notifications/attempts.ts).
  // A rejection gives no event: the call's answer or a lookup decides it (and, arriving while the call runs,
  // it could end the payment before its route fails over).
  const card = cardApprovalOf(payment, paymentId);
  if (card) events.push(card);
  for (const refund of payment.refunds ?? []) {
    const outcome = refund.status === 'approved' ? 'CONFIRMED' : refund.status === 'rejected' || refund.status === 'cancelled' ? 'FAILED' : undefined;
    if (!outcome || refund.id === undefined) continue;
    events.push({
      kind: 'FOLLOW_UP_SETTLED',
      notificationId: `mp_refund_${refund.id}_${refund.status}`,
      operation: 'REFUND',
      outcome,
      reference: null,
      providerOperationId: String(refund.id),
      providerTransactionId: String(payment.id ?? paymentId),
      amount: typeof refund.amount === 'number' ? decimalOf(refund.amount, currency) : null,
      reason: outcome === 'FAILED' ? `refund ${refund.status}` : null,
    });
  }
  return events;
}

/** ATTEMPT_SETTLED for a card payment of ours Mercado Pago approved or authorized; null for anything else. */
function cardApprovalOf(payment: PaymentResponse, paymentId: string): ConnectorEvent | null {
  if (payment.status !== 'approved' && payment.status !== 'authorized') return null;
  if (!payment.external_reference || (payment.payment_method_id && MERCADO_PAGO_ASYNC_IDS.has(payment.payment_method_id))) return null;
  const id = String(payment.id ?? paymentId);
  return {
    kind: 'ATTEMPT_SETTLED',
    notificationId: `mp_card_${id}_${payment.status}`,
    reference: payment.external_reference,
    providerTransactionId: id,
    outcome: 'SUCCEEDED',
    reason: null,
    authorizationCode: payment.authorization_code ?? null,
  };
}

const yes = (v: unknown) => v === true || v === 'true';

async function chargebackEvents(chargebackId: string, body: NotificationBody, rawBody: string, fetcher: NotificationFetcher): Promise<ConnectorEvent[]> {
  const cb = await fetcher.get<MercadoPagoChargeback>(`/v1/chargebacks/${encodeURIComponent(chargebackId)}`);
  const providerPaymentId = idText(cb.payments?.[0]) ?? idText(cb.payment_id) ?? idText(body.data?.payment_id);
  if (!providerPaymentId) return [];
  const payment = await fetcher.get<PaymentResponse>(`/v1/payments/${encodeURIComponent(providerPaymentId)}`);
  const metadata = (payment.metadata ?? {}) as Record<string, unknown>;
  const ourPaymentId = typeof metadata.payorch_payment_id === 'string' ? metadata.payorch_payment_id : undefined;
  // A payment not made through payorch (no metadata of ours): nothing of ours to dispute.
  if (!ourPaymentId) return [];
  const currency = cb.currency ?? cb.currency_id ?? payment.currency_id ?? '';
  const amount = typeof cb.amount === 'number' ? decimalOf(cb.amount, currency) : String(cb.amount ?? payment.transaction_amount ?? '');
  const id = String(cb.id ?? chargebackId);
  const events: ConnectorEvent[] = [
    {
      kind: 'CHARGEBACK',
      // One CHARGEBACK per case, whatever notification announces it first.
      notificationId: `mp_cb_${id}`,
      paymentId: ourPaymentId,
      providerTransactionId: providerPaymentId,
      chargebackId: id,
      amount,
      reason: cb.reason ?? 'CHARGEBACK',
      reasonCode: cb.reason_id ?? null,
      reasonDescription: cb.reason ?? null,
      raw: { notification: JSON.parse(JSON.stringify(body)) as unknown, chargeback: cb } as Record<string, unknown>,
      rawBody,
    },
  ];
  const outcome = yes(cb.coverage_applied) ? 'WON' : cb.documentation_status === 'invalid' || cb.documentation_status === 'not_supplied' ? 'LOST' : undefined;
  if (outcome) {
    events.push({
      kind: 'DISPUTE_CLOSED',
      notificationId: `mp_cb_${id}_${outcome}`,
      providerTransactionId: providerPaymentId,
      chargebackId: id,
      outcome,
      reason: cb.documentation_status ? `documentation ${cb.documentation_status}` : null,
    });
  }
  return events;
}
