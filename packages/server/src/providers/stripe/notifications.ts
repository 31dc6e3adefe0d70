/**
 * Stripe's webhook events for one connection: verified FIRST with the connection's `webhook_secret`
 * (Stripe's own `Stripe-Signature` scheme through `stripe.webhooks.constructEvent`, which also refuses a
 * timestamp older than 5 minutes), then translated to ConnectorEvents:
 *
 * - `refund.created` / `refund.updated` (succeeded → CONFIRMED; failed / canceled → FAILED; pending → none),
 *   `refund.failed` (FAILED), and `charge.refunded` (each refund the charge lists: recent API versions list
 *   none, the refund events carry them) → FOLLOW_UP_SETTLED REFUND;
 * - `charge.dispute.created` → CHARGEBACK (the payment id is read from the disputed PaymentIntent's
 *   metadata: Stripe's dispute object does not carry it);
 * - `charge.dispute.closed` won / lost → DISPUTE_CLOSED (other closing statuses: no event);
 * - `payment_intent.succeeded` / `payment_intent.payment_failed` / `payment_intent.canceled` of a PIX,
 *   boleto or OXXO PaymentIntent → ASYNC_PAYMENT_SETTLED (paid; declined, or expired when Stripe says the
 *   attempt expired; cancelled, or expired when cancelled for its deadline: transformers.ts asyncOutcomeOf);
 *   the same events of a card's intent → none;
 * - any other type → no events (acknowledged with an empty 200, so Stripe stops re-sending it).
 *
 * The deduplication key of each event is Stripe's event id (with the refund id when one event yields several).
 */
import Stripe from 'stripe';
import type { ConnectorEvent, ParsedNotification } from '../connector.js';
import { NotificationSignatureError, type ConnectionContext } from '../provider.js';
import { asyncOutcomeOf, chargebackReason, fromMinor, META } from './transformers.js';

export interface NotificationDeps {
  /** Reads a PaymentIntent with the connection's credentials (for the payment id of a dispute). */
  retrievePaymentIntent(id: string, connection: ConnectionContext): Promise<Stripe.PaymentIntent>;
}

export async function parseStripeNotification(
  rawBody: string,
  headers: Readonly<Record<string, string | undefined>>,
  connection: ConnectionContext,
  deps: NotificationDeps,
): Promise<ParsedNotification> {
  const secret = connection.credentials.webhook_secret;
  if (!secret) throw new NotificationSignatureError('the STRIPE connection has no webhook_secret');
  const signature = headerOf(headers, 'stripe-signature');
  if (!signature) throw new NotificationSignatureError('missing Stripe-Signature header');
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, signature, secret);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) throw new NotificationSignatureError(`Stripe-Signature refused: ${err.message.split('\n')[0]}`);
    throw err;
  }
  return { events: await translate(event, rawBody, connection, deps) };
}

function headerOf(headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

async function translate(event: Stripe.Event, rawBody: string, connection: ConnectionContext, deps: NotificationDeps): Promise<ConnectorEvent[]> {
  switch (event.type) {
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed': {
      const refund = event.data.object;
      const outcome = event.type === 'refund.failed' || refund.status === 'failed' || refund.status === 'canceled' ? 'FAILED' : refund.status === 'succeeded' ? 'CONFIRMED' : null;
      return outcome ? [refundSettled(event.id, refund, outcome)] : [];
    }
    case 'charge.refunded': {
      const charge = event.data.object;
      const refunds = charge.refunds?.data ?? [];
      return refunds
        .filter((r) => r.status === 'succeeded' || r.status === 'failed')
        .map((r) => refundSettled(refunds.length === 1 ? event.id : `${event.id}:${r.id}`, r, r.status === 'succeeded' ? 'CONFIRMED' : 'FAILED'));
    }
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed':
    case 'payment_intent.canceled': {
      // A PIX, boleto or OXXO PaymentIntent ended: the pending payment ends as the sandbox's PAYMENT_SETTLED
      // ends it. A card's intent gives nothing here (its answer was final when the call returned).
      const pi = event.data.object;
      const settled = asyncOutcomeOf(event.type, pi);
      return settled ? [{ kind: 'ASYNC_PAYMENT_SETTLED', notificationId: event.id, providerTransactionId: pi.id, outcome: settled.outcome, reason: settled.reason }] : [];
    }
    case 'charge.dispute.created': {
      const dispute = event.data.object;
      const paymentIntentId = idOf(dispute.payment_intent);
      if (!paymentIntentId) return []; // a dispute of a charge made outside PaymentIntents: not ours
      const pi = await deps.retrievePaymentIntent(paymentIntentId, connection);
      const paymentId = pi.metadata?.[META.paymentId];
      if (!paymentId) return []; // a payment this service did not make
      const card = dispute.payment_method_details?.card;
      return [
        {
          kind: 'CHARGEBACK',
          notificationId: event.id,
          paymentId,
          providerTransactionId: paymentIntentId,
          chargebackId: dispute.id,
          amount: fromMinor(dispute.amount, dispute.currency),
          reason: chargebackReason(dispute.reason),
          reasonCode: card?.network_reason_code ?? null,
          reasonDescription: null,
          raw: event as unknown as Record<string, unknown>,
          rawBody,
        },
      ];
    }
    case 'charge.dispute.closed': {
      const dispute = event.data.object;
      const outcome = dispute.status === 'won' ? 'WON' : dispute.status === 'lost' ? 'LOST' : null;
      const paymentIntentId = idOf(dispute.payment_intent);
      if (!outcome || !paymentIntentId) return [];
      return [{ kind: 'DISPUTE_CLOSED', notificationId: event.id, providerTransactionId: paymentIntentId, chargebackId: dispute.id, outcome, reason: dispute.reason ?? null }];
    }
    default:
      return [];
  }
}

function refundSettled(notificationId: string, refund: Stripe.Refund, outcome: 'CONFIRMED' | 'FAILED'): ConnectorEvent {
  return {
    kind: 'FOLLOW_UP_SETTLED',
    notificationId,
    operation: 'REFUND',
    outcome,
    reference: refund.metadata?.[META.reference] ?? null,
    providerOperationId: refund.id,
    providerTransactionId: idOf(refund.payment_intent),
    amount: fromMinor(refund.amount, refund.currency),
    reason: outcome === 'FAILED' ? (refund.failure_reason ?? refund.status ?? null) : null,
  };
}

const idOf = (value: string | { id: string } | null | undefined): string | null => (typeof value === 'string' ? value : (value?.id ?? null));
