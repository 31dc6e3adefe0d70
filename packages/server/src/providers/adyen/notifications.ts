/**
 * Adyen's standard notifications (webhooks): `{ live, notificationItems: [{ NotificationRequestItem }] }`, each
 * item HMAC-signed on its own (additionalData.hmacSignature, HMAC-SHA256 with the connection's hex hmac_key
 * over pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success),
 * verified with the SDK's HmacValidator before anything of the body is used. One item without a valid
 * signature refuses the whole delivery (NotificationSignatureError): Adyen sends it again.
 *
 * Adyen's signature covers no delivery time, so there is no staleness to check: a replayed item carries the
 * same notification id (eventCode, pspReference, success) and the endpoint applies it once.
 *
 * Translation: CAPTURE / CAPTURE_FAILED, REFUND / REFUND_FAILED / REFUNDED_REVERSED, CANCELLATION /
 * CANCEL_OR_REFUND (the answer to our voids, sent as reversals) →
 * FOLLOW_UP_SETTLED; NOTIFICATION_OF_CHARGEBACK and CHARGEBACK → CHARGEBACK (a CHARGEBACK whose
 * disputeStatus is already Lost / Accepted / Expired closes the dispute LOST instead); CHARGEBACK_REVERSED
 * and PREARBITRATION_WON → DISPUTE_CLOSED WON; PREARBITRATION_LOST and SECOND_CHARGEBACK → DISPUTE_CLOSED
 * LOST. AUTHORISATION and OFFER_CLOSED of a PIX, boleto or OXXO payment (its `paymentMethod` pix,
 * boletobancario…, oxxo) → ASYNC_PAYMENT_SETTLED (paid; declined, expired or cancelled as Adyen's reason says;
 * OFFER_CLOSED: expired — transformers.ts asyncOutcomeOfItem). A card's AUTHORISATION → ATTEMPT_SETTLED (our
 * attempt by its merchantReference: approved or refused; what decides an attempt answered Received / Pending,
 * which Adyen's lookup replay never does). Anything else → no event, acknowledged with Adyen's `[accepted]`.
 */
import adyen from '@adyen/api-library';
import type { ConnectorEvent, ParsedNotification } from '../connector.js';
import { NotificationSignatureError, type ConnectionContext } from '../provider.js';
import { asyncOutcomeOfItem, fromMinorUnits } from './transformers.js';
import { ownEntry } from '../../platform/own-entry.js';

const validator = new adyen.hmacValidator();

export const ADYEN_ACKNOWLEDGEMENT = { contentType: 'text/plain', body: '[accepted]' } as const;

interface Item {
  pspReference: string;
  originalReference?: string;
  merchantAccountCode: string;
  merchantReference: string;
  eventCode: string;
  success: string;
  paymentMethod?: string;
  reason?: string;
  amount: { value: number; currency: string };
  additionalData?: Record<string, string | undefined>;
}

export function parseAdyenNotification(rawBody: string, connection: ConnectionContext): ParsedNotification {
  const hmacKey = connection.credentials.hmac_key;
  if (!hmacKey || !/^[0-9a-fA-F]{2,256}$/.test(hmacKey)) throw new NotificationSignatureError('the connection has no usable hmac_key');
  const items = itemsOf(rawBody);
  for (const item of items) {
    const signature = item.additionalData?.hmacSignature;
    if (!signature) throw new NotificationSignatureError('a notification item has no hmacSignature');
    let valid = false;
    try {
      valid = validator.validateHMAC(item as never, hmacKey);
    } catch {
      valid = false;
    }
    if (!valid) throw new NotificationSignatureError('a notification item has a wrong hmacSignature');
  }
  return { events: items.flatMap((item) => eventsOf(item, rawBody)), acknowledgement: ADYEN_ACKNOWLEDGEMENT };
}

/** The items of a body shaped as Adyen's; anything else cannot be verified, hence is refused as unsigned. */
function itemsOf(rawBody: string): Item[] {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    throw new NotificationSignatureError('the notification is not JSON: nothing to verify');
  }
  const list = (body as { notificationItems?: unknown })?.notificationItems;
  if (!Array.isArray(list) || list.length === 0 || list.length > 100) throw new NotificationSignatureError('the notification has no notificationItems to verify');
  return list.map((wrapper) => {
    const item = (wrapper as { NotificationRequestItem?: unknown })?.NotificationRequestItem as Partial<Item> | undefined;
    const ok =
      item &&
      typeof item.pspReference === 'string' &&
      typeof item.eventCode === 'string' &&
      typeof item.success === 'string' &&
      typeof item.merchantAccountCode === 'string' &&
      typeof item.merchantReference === 'string' &&
      typeof item.amount?.value === 'number' &&
      typeof item.amount?.currency === 'string';
    if (!ok) throw new NotificationSignatureError('a notification item lacks the fields its signature covers');
    return item as Item;
  });
}

const FOLLOW_UPS: Readonly<Record<string, { operation: 'CAPTURE' | 'REFUND' | 'VOID'; failed?: true }>> = {
  CAPTURE: { operation: 'CAPTURE' },
  CAPTURE_FAILED: { operation: 'CAPTURE', failed: true },
  REFUND: { operation: 'REFUND' },
  REFUND_FAILED: { operation: 'REFUND', failed: true },
  // The refund was returned by the cardholder's bank: the money did not reach them.
  REFUNDED_REVERSED: { operation: 'REFUND', failed: true },
  CANCELLATION: { operation: 'VOID' },
  // What our voids send (/reversals): Adyen cancels or refunds, and says so in one event.
  CANCEL_OR_REFUND: { operation: 'VOID' },
};

const LOST_STATUSES = new Set(['Lost', 'Accepted', 'Expired']);

function eventsOf(item: Item, rawBody: string): ConnectorEvent[] {
  const notificationId = `${item.eventCode}:${item.pspReference}:${item.success}`;
  const amount = fromMinorUnits(item.amount.value, item.amount.currency);
  const succeeded = item.success === 'true';
  const followUp = ownEntry(FOLLOW_UPS, item.eventCode);
  if (followUp) {
    return [
      {
        kind: 'FOLLOW_UP_SETTLED',
        notificationId,
        operation: followUp.operation,
        outcome: succeeded && !followUp.failed ? 'CONFIRMED' : 'FAILED',
        reference: item.merchantReference || null,
        providerOperationId: item.pspReference,
        providerTransactionId: item.originalReference ?? null,
        amount,
        reason: item.reason ?? null,
      },
    ];
  }
  // A PIX, boleto or OXXO payment ended (paid, refused, expired, cancelled): the pending payment ends, as the
  // sandbox's PAYMENT_SETTLED ends it. A card's AUTHORISATION decides its attempt: final on the call already
  // (then it changes nothing), or answered Received / Pending, which Adyen's lookup replay never decides: the
  // notification is the only word on it (ATTEMPT_SETTLED, docs/providers/adyen.md).
  const settled = asyncOutcomeOfItem(item);
  if (settled) return [{ kind: 'ASYNC_PAYMENT_SETTLED', notificationId, providerTransactionId: item.pspReference, outcome: settled.outcome, reason: settled.reason }];
  const extra = item.additionalData ?? {};
  if (item.eventCode === 'AUTHORISATION' && item.merchantReference) {
    return [
      {
        kind: 'ATTEMPT_SETTLED',
        // Its own id: whether an AUTHORISATION is a card's or a PIX's is read from paymentMethod, which the HMAC
        // does not cover, so an item relabelled one way never uses up the id of the genuine one.
        notificationId: `CARD_${notificationId}`,
        reference: item.merchantReference,
        providerTransactionId: item.pspReference,
        outcome: succeeded ? 'SUCCEEDED' : 'DECLINED',
        reason: succeeded ? null : (item.reason ?? null),
        authorizationCode: succeeded ? (extra.authCode ?? null) : null,
      },
    ];
  }
  const disputed = item.originalReference ?? '';
  const closed = (outcome: 'WON' | 'LOST'): ConnectorEvent[] => [
    { kind: 'DISPUTE_CLOSED', notificationId, providerTransactionId: disputed, chargebackId: item.pspReference, outcome, reason: item.reason ?? null },
  ];
  switch (item.eventCode) {
    case 'NOTIFICATION_OF_CHARGEBACK':
    case 'CHARGEBACK':
      if (item.eventCode === 'CHARGEBACK' && LOST_STATUSES.has(extra.disputeStatus ?? '')) return closed('LOST');
      return [
        {
          kind: 'CHARGEBACK',
          notificationId,
          // Adyen echoes the merchant reference of the disputed payment: our attempt's reference. The endpoint
          // finds the payment by providerTransactionId (the disputed payment's pspReference).
          paymentId: item.merchantReference,
          providerTransactionId: disputed,
          chargebackId: item.pspReference,
          amount,
          reason: chargebackCategory(extra.chargebackReasonCode),
          reasonCode: extra.chargebackReasonCode ?? null,
          reasonDescription: item.reason ?? null,
          raw: JSON.parse(rawBody) as Record<string, unknown>,
          rawBody,
        },
      ];
    case 'CHARGEBACK_REVERSED':
    case 'PREARBITRATION_WON':
      return closed('WON');
    case 'PREARBITRATION_LOST':
    case 'SECOND_CHARGEBACK':
      return closed('LOST');
    default:
      return [];
  }
}

/** Our chargeback reason for a scheme reason code (Visa 10.x fraud, 12.x processing, 13.x consumer disputes; Mastercard 48xx). */
function chargebackCategory(code: string | undefined): string {
  if (!code) return 'OTHER';
  if (/^10\./.test(code) || ['4837', '4840', '4849', '4870', '4871'].includes(code)) return 'FRAUDULENT';
  if (code === '12.6.1' || code === '4834') return 'DUPLICATE';
  if (code === '13.1' || code === '4855') return 'PRODUCT_NOT_RECEIVED';
  if (code === '13.6' || code === '4860') return 'CREDIT_NOT_PROCESSED';
  if (code === '13.7') return 'REQUESTED_BY_CUSTOMER';
  return 'OTHER';
}
