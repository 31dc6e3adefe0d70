/**
 * The sandbox acquirers' notifications per connection, in their own words (Standard Webhooks signed by
 * the sandbox, verified in sandbox-provider.ts first), translated to ConnectorEvents. The shapes:
 *   { id, type: 'CHARGEBACK', created_at, data: { provider_transaction_id, chargeback_id, amount, reason, reason_code? } }
 *   { id, type: 'FOLLOW_UP_SETTLED', created_at, data: { operation: CAPTURE|REFUND|VOID, outcome: CONFIRMED|FAILED,
 *       reference?, provider_operation_id?, provider_transaction_id?, amount?, reason? } }
 *   { id, type: 'PAYMENT_SETTLED', created_at, data: { provider_transaction_id, outcome: PAID|DECLINED|EXPIRED|CANCELED, reason? } }
 *     (a pending asynchronous payment ended: acquirer/pending-payments.ts)
 *   { id, type: 'DISPUTE_CLOSED', created_at, data: { provider_transaction_id, chargeback_id, outcome: WON|LOST, reason? } }
 * Any other type, or a body not of its type's shape, yields no event (acknowledged, ignored), as a real
 * provider's unknown event types do. A CHARGEBACK's payment is found through the connection, not by a
 * payment id in the body.
 */
import type { ConnectorEvent } from '../connector.js';
import { describeReasonCode } from './chargeback-reasons.js';
import { ownEntry } from '../../platform/own-entry.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const optionalText = (v: unknown): string | null => (text(v) ? v : null);
/** Amounts are JSON numbers in major units; their shortest form is the decimal text sent. */
const amountText = (v: unknown): string | null => (typeof v === 'number' && Number.isFinite(v) ? String(v) : null);

const PAYMENT_OUTCOME: Readonly<Record<string, 'SUCCEEDED' | 'DECLINED' | 'EXPIRED' | 'CANCELED'>> = {
  PAID: 'SUCCEEDED',
  DECLINED: 'DECLINED',
  EXPIRED: 'EXPIRED',
  CANCELED: 'CANCELED',
};

export function sandboxConnectionEvents(parsed: unknown, rawBody: string): ConnectorEvent[] {
  if (!isObject(parsed) || !text(parsed.id) || !isObject(parsed.data)) return [];
  const { id, data } = parsed;
  switch (parsed.type) {
    case 'CHARGEBACK': {
      const amount = amountText(data.amount);
      if (!text(data.provider_transaction_id) || !text(data.chargeback_id) || amount === null) return [];
      const reasonCode = optionalText(data.reason_code);
      return [
        {
          kind: 'CHARGEBACK',
          notificationId: id,
          paymentId: optionalText(data.payment_id) ?? '',
          providerTransactionId: data.provider_transaction_id,
          chargebackId: data.chargeback_id,
          amount,
          reason: optionalText(data.reason) ?? 'OTHER',
          reasonCode,
          reasonDescription: reasonCode ? describeReasonCode(reasonCode) : null,
          raw: parsed,
          rawBody,
        },
      ];
    }
    case 'FOLLOW_UP_SETTLED': {
      const { operation, outcome } = data;
      if ((operation !== 'CAPTURE' && operation !== 'REFUND' && operation !== 'VOID') || (outcome !== 'CONFIRMED' && outcome !== 'FAILED')) return [];
      return [
        {
          kind: 'FOLLOW_UP_SETTLED',
          notificationId: id,
          operation,
          outcome,
          reference: optionalText(data.reference),
          providerOperationId: optionalText(data.provider_operation_id),
          providerTransactionId: optionalText(data.provider_transaction_id),
          amount: amountText(data.amount),
          reason: optionalText(data.reason),
        },
      ];
    }
    case 'PAYMENT_SETTLED': {
      const outcome = ownEntry(PAYMENT_OUTCOME, String(data.outcome));
      if (!text(data.provider_transaction_id) || !outcome) return [];
      return [{ kind: 'ASYNC_PAYMENT_SETTLED', notificationId: id, providerTransactionId: data.provider_transaction_id, outcome, reason: optionalText(data.reason) }];
    }
    case 'DISPUTE_CLOSED': {
      const { outcome } = data;
      if (!text(data.provider_transaction_id) || !text(data.chargeback_id) || (outcome !== 'WON' && outcome !== 'LOST')) return [];
      return [{ kind: 'DISPUTE_CLOSED', notificationId: id, providerTransactionId: data.provider_transaction_id, chargebackId: data.chargeback_id, outcome, reason: optionalText(data.reason) }];
    }
    default:
      return [];
  }
}
