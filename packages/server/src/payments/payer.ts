/**
 * The payer a payment records (issue 14 §1): the enrolled customer when `customer_payer.id` names one,
 * with the inline fields of the request laid over it; or the inline fields alone (no enrolled customer,
 * `id` null). Yuno sends the payer inline with or without an id; both are stored as sent.
 */
import type { Schemas } from '@payorch/types';
import type { PayerInput } from './create-payment.js';
import type { CustomerRow } from '../customers/repository.js';
import { customerPayerSnapshot } from './mapper.js';

type Payer = Schemas['CustomerPayer'];
type InlinePayer = PayerInput;

const EMPTY_PAYER: Payer = {
  id: null,
  merchant_customer_id: null,
  first_name: null,
  last_name: null,
  gender: null,
  date_of_birth: null,
  email: null,
  nationality: null,
  ip_address: null,
  device_fingerprint: null,
  device_fingerprints: [],
  browser_info: null,
  document: null,
  phone: null,
  billing_address: null,
  shipping_address: null,
  merchant_customer_created_at: null,
  geolocation: null,
};

/** Every browser_info field is present in the recorded shape; what was not sent is null. */
function browserInfoOf(b: NonNullable<InlinePayer['browser_info']>): NonNullable<Payer['browser_info']> {
  return {
    user_agent: b.user_agent ?? null,
    accept_header: b.accept_header ?? null,
    accept_content: b.accept_content ?? null,
    accept_browser: b.accept_browser ?? null,
    color_depth: b.color_depth ?? null,
    screen_height: b.screen_height ?? null,
    screen_width: b.screen_width ?? null,
    javascript_enabled: b.javascript_enabled ?? null,
    java_enabled: b.java_enabled ?? null,
    browser_time_difference: b.browser_time_difference ?? null,
    language: b.language ?? null,
    platform: b.platform ?? null,
  };
}

export function payerOf(customer: CustomerRow | undefined, inline: InlinePayer): Payer {
  const base = customer ? customerPayerSnapshot(customer) : EMPTY_PAYER;
  const given = <K extends keyof Payer>(key: K, value: Payer[K] | undefined): Payer[K] => (value === undefined ? base[key] : value);
  return {
    ...base,
    merchant_customer_id: given('merchant_customer_id', inline.merchant_customer_id),
    first_name: given('first_name', inline.first_name),
    last_name: given('last_name', inline.last_name),
    gender: given('gender', inline.gender),
    date_of_birth: given('date_of_birth', inline.date_of_birth),
    email: given('email', inline.email),
    nationality: given('nationality', inline.nationality),
    ip_address: given('ip_address', inline.ip_address),
    device_fingerprints: given('device_fingerprints', inline.device_fingerprints),
    browser_info: inline.browser_info ? browserInfoOf(inline.browser_info) : base.browser_info,
    document: given('document', inline.document as Payer['document'] | undefined),
    phone: given('phone', inline.phone as Payer['phone'] | undefined),
    billing_address: given('billing_address', inline.billing_address as Payer['billing_address'] | undefined),
    shipping_address: given('shipping_address', inline.shipping_address as Payer['shipping_address'] | undefined),
    // Returned in UTC like every timestamp of a response (any offset is accepted on input).
    merchant_customer_created_at:
      inline.merchant_customer_created_at === undefined ? base.merchant_customer_created_at : new Date(inline.merchant_customer_created_at).toISOString(),
  };
}
