/**
 * How a provider's answer is recorded on a transaction: the provider as the API names it, the
 * connection used, and provider_data (raw_response apart: it is stored as received, shown on request).
 */
import type { Schemas } from '@payorch/types';
import type { PaymentProvider, ProviderResult } from '../providers/provider.js';

/** The provider's id as transactions show it: the adapter's id (SANDBOX_A, SANDBOX_B). */
export function providerLabel(provider: PaymentProvider): string {
  return provider.id.toUpperCase();
}

/** Every payment goes through the provider's one default connection (no merchant-level routing yet). */
export function connectionDataOf(provider: PaymentProvider): Schemas['ConnectionData'] {
  return { id: `${provider.id.toLowerCase()}-default`, name: `${provider.id} default connection` };
}

/** Provider status words as acquirers report them. */
const PROVIDER_STATUS = { SUCCEEDED: 'APPROVED', DECLINED: 'DECLINED', ERROR: 'ERROR' } as const;

export function providerDataOf(provider: PaymentProvider, r: ProviderResult): Omit<Schemas['ProviderData'], 'raw_response'> {
  return {
    id: providerLabel(provider),
    transaction_id: r.providerTransactionId,
    account_id: null,
    status: PROVIDER_STATUS[r.outcome],
    sub_status: null,
    status_detail: r.responseCode,
    response_message: r.iso8583ResponseMessage,
    response_code: r.iso8583ResponseCode,
    third_party_transaction_id: null,
    third_party_account_id: null,
    iso8583_response_code: r.iso8583ResponseCode,
    iso8583_response_message: r.iso8583ResponseMessage,
    merchant_advice_code: r.merchantAdviceCode,
    merchant_advice_code_message: r.merchantAdviceCodeMessage,
    reason_code: null,
    reason_description: null,
  };
}
