import { createHash, randomBytes, randomInt } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { Queryable } from '../../db/database.js';
import {
  NotificationSignatureError,
  type ChargebackEvent,
  type DisputeEvidenceAck,
  type DisputeEvidenceForward,
  type FollowUp,
  type PaymentProvider,
  type ProviderCard,
  type ProviderCardInfo,
  type ProviderResult,
  type SimulatedChargeback,
  type WebhookHeaders,
} from '../provider.js';
import { chargebackReason, describeReasonCode } from './chargeback-reasons.js';
import { API_BASE_PATH } from '../../vault/brand-icons.js';
import { loadNotificationSecret } from './notification-secret.js';
import { sandboxRepository } from './repository.js';
import type { PurposeBox } from '../../vault/crypto/secret-box.js';
import { behaviourOf } from './test-cards.js';

export interface SandboxProviderOptions {
  /**
   * Where the sandbox keeps its own state: the notification signing secret and the evidence it
   * received. Without it, only verify/purchase work (enough for code that never receives notifications).
   */
  db?: Queryable;
  /** Seals the signing secret at rest (providerSecretBox of the vault keyring); required with `db`. */
  secrets?: PurposeBox;
  /**
   * Sandbox mode (SANDBOX): the hosted enrollment page for non-card methods and the automatic chargeback
   * of test card 4000000000000259. Off, neither exists: no page approves an enrollment without a bank,
   * no chargeback arrives that no issuer sent.
   */
  sandboxMode?: boolean;
}

/**
 * The sandbox acquirer: answers like a real one (ids, authorization codes, RRNs, ISO 8583 and merchant
 * advice codes, a raw response document) from the test-card table, without any network. It signs its
 * notifications per Standard Webhooks with a per-provider secret generated once, and records forwarded
 * dispute evidence by the sender's reference so a re-delivery has no second effect.
 */
export class SandboxProvider implements PaymentProvider {
  readonly id = 'sandbox';
  private readonly db: Queryable | undefined;
  private readonly secrets: PurposeBox | undefined;
  private secret: Promise<string> | undefined;
  private readonly sandboxMode: boolean;
  readonly startRedirectEnrollment?: PaymentProvider['startRedirectEnrollment'];

  constructor(options: SandboxProviderOptions = {}) {
    this.db = options.db;
    this.secrets = options.secrets;
    this.sandboxMode = options.sandboxMode ?? false;
    // The page is served by this server (vault/sandbox-pages.ts, mounted in sandbox mode only).
    if (this.sandboxMode) {
      this.startRedirectEnrollment = async ({ vaultedToken, baseUrl }) => ({ redirectUrl: `${baseUrl}${API_BASE_PATH}/sandbox/enrollments/${vaultedToken}` });
    }
  }

  async verify(input: { card: ProviderCard; currency: string | null; reference: string }): Promise<ProviderResult> {
    return this.answer('VERIFY', input.card, '0', input.currency ?? 'USD', input.reference);
  }

  async purchase(input: { card: ProviderCard; amount: string; currency: string; reference: string; description: string }): Promise<ProviderResult> {
    return this.answer('PURCHASE', input.card, input.amount, input.currency, input.reference);
  }

  async authorize(input: { card: ProviderCard; amount: string; currency: string; reference: string; description: string }): Promise<ProviderResult> {
    return this.answer('AUTHORIZE', input.card, input.amount, input.currency, input.reference);
  }

  async capture(input: FollowUp): Promise<ProviderResult> {
    return this.followUp('CAPTURE', input);
  }

  async void(input: FollowUp): Promise<ProviderResult> {
    return this.followUp('VOID', input);
  }

  async refund(input: FollowUp): Promise<ProviderResult> {
    return this.followUp('REFUND', input);
  }

  async forwardDisputeEvidence(input: DisputeEvidenceForward): Promise<DisputeEvidenceAck> {
    const db = this.requireDb();
    // A real acquirer checks what it receives: a corrupted document is not accepted.
    for (const doc of input.evidence) {
      if (createHash('sha256').update(doc.content).digest('hex') !== doc.sha256) {
        throw new Error(`sandbox provider: evidence ${doc.id} does not match its SHA-256`);
      }
    }
    const providerDisputeId = `sbx_dsp_${createHash('sha256').update(input.chargebackId ?? input.paymentId).digest('hex').slice(0, 16)}`;
    const stored = await sandboxRepository.recordForward(db, {
      reference: input.reference,
      providerDisputeId,
      paymentId: input.paymentId,
      chargebackId: input.chargebackId,
      documents: input.evidence.map((d) => ({ id: d.id, file_name: d.fileName, category: d.category, sha256: d.sha256, size: d.content.length })),
    });
    return { providerDisputeId: stored.providerDisputeId, duplicate: stored.deliveries > 1 };
  }

  async parseNotification(rawBody: string, headers: Partial<WebhookHeaders>): Promise<ChargebackEvent> {
    const webhook = new Webhook(await this.notificationSecret());
    let parsed: unknown;
    try {
      parsed = webhook.verify(rawBody, {
        'webhook-id': headers['webhook-id'] ?? '',
        'webhook-timestamp': headers['webhook-timestamp'] ?? '',
        'webhook-signature': headers['webhook-signature'] ?? '',
      });
    } catch (err) {
      if (err instanceof WebhookVerificationError) throw new NotificationSignatureError(err.message);
      throw err;
    }
    const body = parsed as {
      id: string;
      type: string;
      data: { payment_id: string; provider_transaction_id: string; amount: number; reason: string; reason_code?: string | null; chargeback_id?: string };
    };
    if (body?.type !== 'CHARGEBACK' || typeof body.data !== 'object') throw new Error(`sandbox provider: unknown notification type ${String(body?.type)}`);
    const reasonCode = body.data.reason_code ?? null;
    return {
      kind: 'CHARGEBACK',
      notificationId: body.id,
      paymentId: body.data.payment_id,
      providerTransactionId: body.data.provider_transaction_id,
      chargebackId: body.data.chargeback_id ?? body.id,
      // A JSON number's shortest form is the text sent for any amount with up to 15 significant digits.
      amount: String(body.data.amount),
      reason: body.data.reason,
      reasonCode,
      reasonDescription: reasonCode ? describeReasonCode(reasonCode) : null,
      raw: parsed as Record<string, unknown>,
      rawBody,
    };
  }

  async simulateChargeback(input: SimulatedChargeback): Promise<{ rawBody: string; headers: WebhookHeaders }> {
    const id = input.notificationId ?? `sbx_ntf_${randomBytes(10).toString('hex')}`;
    const { code } = chargebackReason(input.reason);
    const at = new Date();
    // `amount` is written as the exact decimal text, not through a float.
    const rawBody =
      `{"id":${JSON.stringify(id)},"type":"CHARGEBACK","created_at":${JSON.stringify(at.toISOString())},` +
      `"data":{"payment_id":${JSON.stringify(input.paymentId)},"provider_transaction_id":${JSON.stringify(input.providerTransactionId)},` +
      `"chargeback_id":${JSON.stringify(`sbx_cb_${createHash('sha256').update(id).digest('hex').slice(0, 12)}`)},` +
      `"amount":${input.amount},"reason":${JSON.stringify(input.reason)},"reason_code":${JSON.stringify(code)}}}`;
    return { rawBody, headers: await this.sign(id, at, rawBody) };
  }

  /** Standard Webhooks headers for a body, as this provider signs its notifications. */
  async sign(id: string, at: Date, rawBody: string): Promise<WebhookHeaders> {
    const webhook = new Webhook(await this.notificationSecret());
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': webhook.sign(id, at, rawBody),
    };
  }

  /** The provider's signing secret (`whsec_…`), generated once and stored sealed; the same for every instance. */
  notificationSecret(): Promise<string> {
    if (!this.secrets) return Promise.reject(new Error('sandbox provider: no secret box configured'));
    this.secret ??= loadNotificationSecret(this.requireDb(), this.secrets, this.id)
      .catch((err: unknown) => {
        this.secret = undefined;
        throw err;
      });
    return this.secret;
  }

  private requireDb(): Queryable {
    if (!this.db) throw new Error('sandbox provider: no database configured');
    return this.db;
  }

  /**
   * Capture, void or refund of an earlier transaction. The sandbox keeps no state of its own: what it must
   * remember about the card (a test card that fails its capture or refund) is written into the id it gave
   * the authorization, as a real acquirer finds it in its own records.
   */
  private followUp(kind: 'CAPTURE' | 'VOID' | 'REFUND', input: FollowUp): ProviderResult {
    const fails = (kind === 'CAPTURE' && input.providerTransactionId.startsWith(CAPTURE_FAILS)) || (kind === 'REFUND' && input.providerTransactionId.startsWith(REFUND_FAILS));
    const providerTransactionId = `sbx_txn_${randomBytes(8).toString('hex')}`;
    const [responseCode, responseMessage, iso] = fails
      ? kind === 'CAPTURE'
        ? (['CAPTURE_DECLINED', 'The acquirer refused the capture: the authorization is no longer valid', ['12', 'Invalid transaction']] as const)
        : (['REFUND_DECLINED', 'The acquirer refused the refund: the merchant account cannot be debited', ['57', 'Transaction not permitted to cardholder']] as const)
      : (['SUCCEEDED', 'Transaction successful', ['00', 'Approved or completed successfully']] as const);
    return {
      outcome: fails ? 'DECLINED' : 'SUCCEEDED',
      providerTransactionId,
      responseCode,
      responseMessage,
      iso8583ResponseCode: iso[0],
      iso8583ResponseMessage: iso[1],
      merchantAdviceCode: null,
      merchantAdviceCodeMessage: null,
      authorizationCode: null,
      retrievalReferenceNumber: String(randomInt(100_000_000_000, 999_999_999_999)),
      rawResponse: {
        id: providerTransactionId,
        type: kind,
        reference: input.reference,
        original_transaction_id: input.providerTransactionId,
        amount: { value: input.amount, currency: input.currency },
        status: fails ? 'DECLINED' : 'APPROVED',
        response: { code: iso[0], message: iso[1] },
        processed_at: new Date().toISOString(),
      },
    };
  }

  private answer(kind: 'VERIFY' | 'PURCHASE' | 'AUTHORIZE', card: ProviderCard, amount: string, currency: string, reference: string): ProviderResult {
    const b = behaviourOf(card.number);
    const marker = b.failsOn === 'CAPTURE' ? CAPTURE_FAILS : b.failsOn === 'REFUND' ? REFUND_FAILS : 'sbx_txn_';
    const providerTransactionId = `${marker}${randomBytes(8).toString('hex')}`;
    const succeeded = b.outcome === 'SUCCEEDED';
    const authorizationCode = succeeded ? String(randomInt(100000, 999999)) : null;
    const retrievalReferenceNumber = String(randomInt(100_000_000_000, 999_999_999_999));
    const cardInfo = binInfo(card.brand);
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
      chargebackFollows: this.sandboxMode && (b.chargebackFollows ?? false),
      cardInfo,
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
        card: {
          bin: card.number.slice(0, 6),
          last4: card.number.slice(-4),
          brand: card.brand,
          issuer: cardInfo.issuerName,
          country: cardInfo.countryCode,
          funding: cardInfo.type,
          product: cardInfo.category,
        },
        merchant_advice: b.merchantAdvice ? { code: b.merchantAdvice[0], message: b.merchantAdvice[1] } : null,
        processed_at: new Date().toISOString(),
      },
    };
  }
}

/** Id prefixes of authorizations whose capture, or refund, the sandbox will refuse (test cards …0085, …0093). */
const CAPTURE_FAILS = 'sbx_txn_cf_';
const REFUND_FAILS = 'sbx_txn_rf_';

/** The sandbox's BIN table: every test card is issued by the same bank. */
function binInfo(brand: string): ProviderCardInfo {
  const category: Record<string, string> = { VISA: 'CLASSIC', MASTERCARD: 'STANDARD', AMEX: 'GREEN' };
  return { issuerName: 'Sandbox Bank', issuerCode: null, countryCode: 'BR', category: category[brand] ?? 'CLASSIC', type: 'CREDIT' };
}

