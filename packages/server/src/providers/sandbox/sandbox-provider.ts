import { randomBytes, randomInt } from 'node:crypto';
import type { PaymentProvider, ProviderCard, ProviderResult } from '../provider.js';
import { behaviourOf } from './test-cards.js';

/**
 * The sandbox acquirer: answers like a real one (ids, authorization codes, RRNs, ISO 8583 and merchant
 * advice codes, a raw response document) from the test-card table, without any network.
 */
export class SandboxProvider implements PaymentProvider {
  readonly id = 'sandbox';

  async verify(input: { card: ProviderCard; currency: string | null; reference: string }): Promise<ProviderResult> {
    return this.answer('VERIFY', input.card, '0', input.currency ?? 'USD', input.reference);
  }

  async purchase(input: { card: ProviderCard; amount: string; currency: string; reference: string; description: string }): Promise<ProviderResult> {
    return this.answer('PURCHASE', input.card, input.amount, input.currency, input.reference);
  }

  private answer(kind: 'VERIFY' | 'PURCHASE', card: ProviderCard, amount: string, currency: string, reference: string): ProviderResult {
    const b = behaviourOf(card.number);
    const providerTransactionId = `sbx_txn_${randomBytes(8).toString('hex')}`;
    const succeeded = b.outcome === 'SUCCEEDED';
    const authorizationCode = succeeded ? String(randomInt(100000, 999999)) : null;
    const retrievalReferenceNumber = String(randomInt(100_000_000_000, 999_999_999_999));
    return {
      outcome: b.outcome,
      providerTransactionId,
      responseCode: b.responseCode,
      responseMessage: b.responseMessage,
      iso8583ResponseCode: b.iso8583[0],
      iso8583ResponseMessage: b.iso8583[1],
      merchantAdviceCode: b.merchantAdvice?.[0] ?? null,
      merchantAdviceCodeMessage: b.merchantAdvice?.[1] ?? null,
      authorizationCode,
      retrievalReferenceNumber,
      chargebackFollows: b.chargebackFollows ?? false,
      // What the acquirer "sent": masked card only, never the PAN or the security code.
      rawResponse: {
        id: providerTransactionId,
        type: kind,
        reference,
        amount: { value: amount, currency },
        status: b.outcome === 'SUCCEEDED' ? 'APPROVED' : b.outcome === 'DECLINED' ? 'DECLINED' : 'ERROR',
        response: { code: b.iso8583[0], message: b.iso8583[1] },
        authorization_code: authorizationCode,
        rrn: retrievalReferenceNumber,
        card: { bin: card.number.slice(0, 6), last4: card.number.slice(-4), brand: card.brand },
        merchant_advice: b.merchantAdvice ? { code: b.merchantAdvice[0], message: b.merchantAdvice[1] } : null,
        processed_at: new Date().toISOString(),
      },
    };
  }
}
