/**
 * payment_methods row → API EnrolledPaymentMethod (docs/interface-spec.md §2.7): every field present, null when
 * unknown; masked card data only. A card past its expiry month is shown as EXPIRED.
 */
import type { Schemas } from '@payorch/types';
import { toIsoMicros } from '../db/database.js';
import { brandIconUrl, iconSlugFor } from './brand-icons.js';
import { brandDisplayName, isExpired } from './card-validation.js';
import type { PaymentMethodRow } from './repository.js';

type EnrolledPaymentMethod = Schemas['EnrolledPaymentMethod'];
type Status = Schemas['EnrolledPaymentMethodStatus'];

/** Masked, displayable details of a non-card method (what `details` holds). */
export interface MaskedDetails {
  bank_name?: string | null;
  account_type?: string | null;
  bank_account_last4?: string | null;
  beneficiary_name?: string | null;
  provider_id?: string | null;
  token_source?: string | null;
}

const TYPE_LABEL: Readonly<Record<string, string>> = {
  CARD: 'Card',
  ACH_ENROLLMENT: 'ACH bank account',
  WALLET_PAY_ENROLLMENT: 'Wallet',
};

/** How long a READY_TO_ENROLL method waits for the customer before it is EXPIRED (spec: EnrolledPaymentMethodStatus). */
export const READY_TO_ENROLL_HOURS = 24;

/**
 * The status the API shows: a stored ENROLLED card whose expiry month has passed is EXPIRED, and so is a
 * READY_TO_ENROLL method nobody completed within READY_TO_ENROLL_HOURS. Computed at read (no job): the
 * same answer on every instance, and the completion refuses it in SQL by the same rule.
 */
export function effectiveStatus(
  row: Pick<PaymentMethodRow, 'status' | 'card_expiration_month' | 'card_expiration_year' | 'created_at'>,
  now: Date,
): Status {
  if (row.status === 'ENROLLED' && row.card_expiration_month !== null && row.card_expiration_year !== null) {
    if (isExpired(row.card_expiration_month, row.card_expiration_year, now)) return 'EXPIRED';
  }
  if (row.status === 'READY_TO_ENROLL' && now.getTime() - Date.parse(String(row.created_at)) > READY_TO_ENROLL_HOURS * 3_600_000) return 'EXPIRED';
  return row.status as Status;
}

/** The spec bounds name and description at 255; a merchant's bank name or provider id can be that long alone. */
const MAX_LABEL = 255;
// Counted in code points, as JSON Schema's maxLength counts them (and so no surrogate pair is cut).
const bounded = (text: string): string => {
  const points = [...text];
  return points.length <= MAX_LABEL ? text : `${points.slice(0, MAX_LABEL - 1).join('')}…`;
};

/** "VISA ****1111"; for other methods the type and, when known, the last four digits. */
export function maskedName(row: PaymentMethodRow): string {
  return bounded(unboundedName(row));
}

function unboundedName(row: PaymentMethodRow): string {
  if (row.card_brand && row.card_lfd) return `${row.card_brand} ****${row.card_lfd}`;
  const d = (row.details ?? {}) as MaskedDetails;
  if (row.type === 'ACH_ENROLLMENT') return d.bank_account_last4 ? `ACH ****${d.bank_account_last4}` : 'ACH';
  if (d.provider_id) return `${row.type} (${d.provider_id} token)`;
  return row.type === 'WALLET_PAY_ENROLLMENT' ? 'WALLET' : row.type;
}

function description(row: PaymentMethodRow): string {
  return bounded(unboundedDescription(row));
}

function unboundedDescription(row: PaymentMethodRow): string {
  if (row.card_brand && row.card_lfd && row.card_expiration_month !== null && row.card_expiration_year !== null) {
    const mm = String(row.card_expiration_month).padStart(2, '0');
    return `${brandDisplayName(row.card_brand)} card ending in ${row.card_lfd}, expires ${mm}/${2000 + row.card_expiration_year}`;
  }
  const d = (row.details ?? {}) as MaskedDetails;
  const label = TYPE_LABEL[row.type] ?? row.type;
  if (d.provider_id) return `${label} enrolled with a ${d.provider_id} token`;
  if (d.bank_account_last4) return `${label} ending in ${d.bank_account_last4}${d.bank_name ? ` at ${d.bank_name}` : ''}`;
  return label;
}

function cardData(row: PaymentMethodRow): Schemas['EnrolledCardData'] | null {
  if (
    row.card_brand === null ||
    row.card_iin === null ||
    row.card_lfd === null ||
    row.card_number_length === null ||
    row.card_expiration_month === null ||
    row.card_expiration_year === null
  ) {
    return null;
  }
  return {
    iin: row.card_iin,
    lfd: row.card_lfd,
    holder_name: row.card_holder_name,
    expiration_month: row.card_expiration_month,
    expiration_year: row.card_expiration_year,
    number_length: row.card_number_length,
    security_code_length: row.card_security_code_length ?? 0,
    brand: row.card_brand,
    issuer: row.card_issuer,
    issuer_name: row.card_issuer_name,
    issuer_code: row.card_issuer_code,
    country_code: row.card_country_code,
    category: row.card_category,
    type: row.card_funding_type,
    fingerprint: row.fingerprint,
  };
}

/** The verify column before 2.0.0: the outcome flat, with no verification id or time. */
interface LegacyVerify {
  vault_on_success: boolean;
  currency: string | null;
  status: 'SUCCEEDED' | 'DECLINED' | 'ERROR' | null;
  response_code: string | null;
  response_message: string | null;
}

type Verify = NonNullable<EnrolledPaymentMethod['verify']>;

/** Stored verify → Yuno's `{vault_on_success, currency, payment}`; rows written before 2.0.0 are converted. */
function verifyOf(row: PaymentMethodRow): Verify | null {
  const stored = row.verify as Verify | LegacyVerify | null;
  if (!stored) return null;
  if ('payment' in stored) return stored;
  const legacy = stored;
  return {
    vault_on_success: legacy.vault_on_success,
    currency: legacy.currency,
    payment:
      legacy.status === null
        ? null
        : {
            id: null,
            status: legacy.status,
            sub_status: legacy.status === 'SUCCEEDED' ? 'VERIFIED' : legacy.status,
            amount: { currency: legacy.currency, value: 0 },
            response_code: legacy.response_code,
            response_message: legacy.response_message,
            provider_data: row.verify_provider_id ? { id: row.verify_provider_id, transaction_id: row.verify_provider_transaction_id } : null,
            created_at: null,
          },
  };
}

/** `baseUrl` is the service's public origin (icons are addressed from it). */
export function toApiPaymentMethod(row: PaymentMethodRow, baseUrl: string, now: Date = new Date()): EnrolledPaymentMethod {
  return {
    idempotency_key: row.idempotency_key,
    name: maskedName(row),
    description: description(row),
    icon: brandIconUrl(baseUrl, iconSlugFor(row.type, row.card_brand)),
    type: row.type,
    category: row.category,
    country: row.country,
    status: effectiveStatus(row, now),
    sub_status: row.sub_status,
    vaulted_token: row.vaulted_token,
    callback_url: row.callback_url,
    action: row.action === 'REDIRECT_URL' ? 'REDIRECT_URL' : null,
    redirect_url: row.redirect_url,
    parent_type: row.parent_type,
    created_at: toIsoMicros(row.created_at),
    updated_at: toIsoMicros(row.updated_at),
    card_data: cardData(row),
    last_successfully_used: row.last_successfully_used,
    last_successfully_used_at: toIsoMicros(row.last_successfully_used_at),
    preferred: row.preferred,
    verify: verifyOf(row),
  };
}
