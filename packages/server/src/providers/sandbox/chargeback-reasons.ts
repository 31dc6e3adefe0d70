/**
 * Chargeback reasons the sandbox acquirer reports, with the card-network reason code (Visa's dispute
 * categories) an issuer would attach to each.
 */
import { ownEntry } from '../../platform/own-entry.js';

const REASONS: Readonly<Record<string, { code: string; description: string }>> = {
  REQUESTED_BY_CUSTOMER: { code: '13.7', description: 'Cancelled merchandise/services' },
  FRAUDULENT: { code: '10.4', description: 'Other fraud - card-absent environment' },
  PRODUCT_NOT_RECEIVED: { code: '13.1', description: 'Merchandise/services not received' },
  DUPLICATE: { code: '12.6.1', description: 'Duplicate processing' },
  CREDIT_NOT_PROCESSED: { code: '13.6', description: 'Credit not processed' },
  OTHER: { code: '13.3', description: 'Not as described or defective merchandise/services' },
};

const BY_CODE = new Map(Object.values(REASONS).map((r) => [r.code, r.description]));

export function chargebackReason(reason: string): { code: string | null; description: string | null } {
  const r = ownEntry(REASONS, reason);
  return r ? { code: r.code, description: r.description } : { code: null, description: null };
}

export function describeReasonCode(code: string): string | null {
  return BY_CODE.get(code) ?? null;
}
