/**
 * The SANDBOX_A adapter: PaymentProvider over acquirer A's JSON protocol (acquirer-a/server.ts).
 * Credentials: `{api_key}` sent as a bearer token; the reference is A's idempotency key.
 */
import { ProviderUnavailableError, type AsyncCharge, type AsyncStart, type Charge, type ConnectionContext, type FollowUp, type ProviderCard, type ProviderLookup, type ProviderResult, type SimulatedAsyncOutcome } from '../provider.js';
import type { IssuedAction } from './acquirer/pending-payments.js';
import { SANDBOX_A } from '../registry.js';
import { callAcquirer, type AcquirerAnswer } from './http-call.js';
import { answerToResult, SandboxProvider } from './sandbox-provider.js';

/** The key used when a call names no connection: any `sk_sandbox_…` key is accepted by acquirer A. */
export const SANDBOX_A_DEFAULT_CREDENTIALS = { api_key: 'sk_sandbox_a_default_key' } as const;

export class SandboxAProvider extends SandboxProvider {
  readonly id = SANDBOX_A;

  verify(input: { card: ProviderCard; currency: string | null; reference: string; connection?: ConnectionContext }): Promise<ProviderResult> {
    return this.charge({ card: input.card, amount: '0', currency: input.currency ?? 'USD', reference: input.reference, description: 'verify', connection: input.connection }, true, true);
  }
  purchase(input: Charge): Promise<ProviderResult> {
    return this.charge(input, true, false);
  }
  authorize(input: Charge): Promise<ProviderResult> {
    return this.charge(input, false, false);
  }
  capture(input: FollowUp): Promise<ProviderResult> {
    return this.followUp('captures', input);
  }
  void(input: FollowUp): Promise<ProviderResult> {
    return this.followUp('voids', input);
  }
  refund(input: FollowUp): Promise<ProviderResult> {
    return this.followUp('refunds', input);
  }

  async lookup(input: { reference: string; connection?: ConnectionContext }): Promise<ProviderLookup> {
    const answer = await this.call('GET', `/v1/operations/${encodeURIComponent(input.reference)}`, undefined, input.connection);
    if (answer.status === 404) return { found: false };
    const operation = answer.body.operation as { status?: string } | undefined;
    const first = answer.body.answer as Record<string, unknown> | undefined;
    if (answer.status !== 200 || !operation || !first) throw new ProviderUnavailableError(this.id, 'BAD_RESPONSE', `${this.id} lookup answered HTTP ${answer.status}`);
    return { found: true, result: this.toResult(first), voided: operation.status === 'VOIDED' };
  }

  async startAsyncPayment(input: AsyncCharge): Promise<AsyncStart> {
    const body = {
      reference: input.reference,
      payment_id: input.paymentId,
      method: input.method,
      country: input.country,
      amount: { value: input.amount, currency: input.currency },
      ...(input.walletToken ? { wallet: { token: input.walletToken.paymentToken, last_four: input.walletToken.lastFour } } : {}),
      ...(input.payerAccount
        ? {
            payer_account: {
              bank_code: input.payerAccount.bankCode,
              branch: input.payerAccount.branch,
              number: input.payerAccount.accountNumber,
              digit: input.payerAccount.accountDigit,
              type: input.payerAccount.accountType,
              mandate_id: input.payerAccount.mandateId,
            },
          }
        : {}),
    };
    const answer = await this.call('POST', '/v1/payment-requests', body, input.connection);
    const b = answer.body as { id?: string; status?: string; action?: IssuedAction; expires_at?: string };
    if (answer.status !== 200 || b.status !== 'PENDING' || !b.action || typeof b.expires_at !== 'string') return { result: this.interpret(answer), action: null };
    return { result: this.issuedResult(String(b.id ?? ''), answer.body), action: this.shopperAction(b.action, b.expires_at, input) };
  }

  protected async settleAtAcquirer(input: SimulatedAsyncOutcome): Promise<string | undefined> {
    const answer = await this.call('POST', `/v1/payment-requests/${encodeURIComponent(input.providerTransactionId)}/outcome`, { outcome: input.outcome }, input.connection);
    return answer.status === 200 ? String(answer.body.status) : undefined;
  }

  private async charge(input: Charge, capture: boolean, verification: boolean): Promise<ProviderResult> {
    const body = {
      reference: input.reference,
      payment_id: input.paymentId,
      capture,
      ...(verification ? { verification: true } : {}),
      amount: { value: input.amount, currency: input.currency },
      description: input.description,
      soft_descriptor: input.softDescriptor ?? undefined,
      card: {
        number: input.card.number,
        holder_name: input.card.holderName,
        expiry_month: input.card.expirationMonth,
        expiry_year: input.card.expirationYear,
        cvc: input.card.securityCode,
        brand: input.card.brand,
      },
    };
    return this.interpret(await this.call('POST', '/v1/charges', body, input.connection));
  }

  private async followUp(path: 'captures' | 'voids' | 'refunds', input: FollowUp): Promise<ProviderResult> {
    const body = { reference: input.reference, amount: { value: input.amount, currency: input.currency } };
    return this.interpret(await this.call('POST', `/v1/charges/${encodeURIComponent(input.providerTransactionId)}/${path}`, body, input.connection));
  }

  private call(method: 'GET' | 'POST', path: string, body: unknown, connection: ConnectionContext | undefined): Promise<AcquirerAnswer> {
    const c = this.connectionOf(connection);
    return callAcquirer(this.id, `${this.endpoint.url}${path}`, { method, headers: { authorization: `Bearer ${c.credentials.api_key ?? ''}` }, body }, c.timeoutMs);
  }

  private interpret(answer: AcquirerAnswer): ProviderResult {
    return answerToResult(answer, (body) => this.toResult(body));
  }

  private toResult(body: Record<string, unknown>): ProviderResult {
    const b = body as {
      id?: string;
      status?: string;
      response?: { code?: string; message?: string };
      reason?: { code?: string; message?: string };
      merchant_advice?: { code?: string; message?: string } | null;
      authorization_code?: string | null;
      rrn?: string | null;
      card?: { issuer?: string; country?: string; funding?: string; product?: string };
      simulation?: { chargeback_follows?: boolean };
    };
    const outcome = b.status === 'APPROVED' ? 'SUCCEEDED' : b.status === 'DECLINED' ? 'DECLINED' : 'ERROR';
    return {
      outcome,
      providerTransactionId: String(b.id ?? ''),
      responseCode: b.reason?.code ?? (outcome === 'SUCCEEDED' ? 'SUCCEEDED' : 'PROVIDER_ERROR'),
      responseMessage: b.reason?.message ?? '',
      iso8583ResponseCode: b.response?.code ?? '96',
      iso8583ResponseMessage: b.response?.message ?? 'System malfunction',
      merchantAdviceCode: b.merchant_advice?.code ?? null,
      merchantAdviceCodeMessage: b.merchant_advice?.message ?? null,
      authorizationCode: b.authorization_code ?? null,
      retrievalReferenceNumber: b.rrn ?? null,
      chargebackFollows: this.shared.sandboxMode && b.simulation?.chargeback_follows === true,
      ...(b.card
        ? { cardInfo: { issuerName: b.card.issuer ?? null, issuerCode: null, countryCode: b.card.country ?? null, category: b.card.product ?? null, type: b.card.funding ?? null } }
        : {}),
      rawResponse: body,
    };
  }
}
