/**
 * A local Stripe for the connector's tests (plain node:http, an ephemeral port): the part of Stripe's API
 * the STRIPE adapter uses, answered in Stripe's shapes (objects.ts), with its own ledger and amounts
 * enforced, Stripe's idempotency (same key + same parameters → the stored answer with
 * `Idempotent-Replayed: true`; other parameters → idempotency_error), and faults a test sets:
 *
 *   double.fault({ decline: 'insufficient_funds' })   the next PaymentIntent creations decline with it
 *   double.fault({ mode: 'timeout' })                 processed, never answered
 *   double.fault({ mode: 'late', ms })                processed, answered after `ms`
 *   double.fault({ mode: 'error' })                   HTTP 500 api_error, nothing processed
 *   double.fault({ mode: 'oversized' })               processed, answered with a body over 64 KiB
 *
 * Faults apply to creations (POST /v1/payment_intents, /v1/setup_intents) unless `on` says `'all'` or one
 * call (`'POST /v1/refunds'`);
 * `searchLag(ms)` hides intents younger than `ms` from search, as Stripe's index lags. `signedNotification` makes events signed
 * as Stripe signs them (Stripe-Signature, the `stripe` package's generateTestHeaderString), so the real
 * `constructEvent` accepts them. Its request log never holds a card number or security code (last four
 * digits only).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import {
  chargeObject,
  disputeObject,
  emptyEvidence,
  eventObject,
  EVIDENCE_FIELD_NAMES,
  EVIDENCE_FILE_FIELDS,
  fileObject,
  paymentIntentObject,
  refundObject,
  setupIntentObject,
  type DeclineError,
  type IntentRecord,
  type Ledger,
  type RefundRecord,
  type SetupRecord,
  type AsyncIntentType,
} from './objects.js';
import { decodeForm, decodeMultipart, decodeSearch } from './wire.js';
import { pixCode } from '../pix-code.js';
import { referenceDigits } from '../reference-digits.js';

export type StripeFault =
  /** `decline` is the decline_code (or the error code for Stripe's error-level codes); `code` overrides the error's code. */
  | { decline: string; declineCode?: string | null; code?: string; on?: FaultScope }
  | { mode: 'timeout' | 'error' | 'oversized'; on?: FaultScope }
  | { mode: 'late'; ms: number; on?: FaultScope };

/** Which calls a fault hits: intent creations (the default), every call, or one method and path (`POST /v1/refunds`). */
export type FaultScope = 'create' | 'all' | `${'GET' | 'POST'} /v1/${string}`;

export interface RecordedRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  /** The form parameters, card number cut to its last four digits and the security code removed. */
  params: Record<string, unknown>;
  /** Multipart uploads: the parts, without their content. */
  parts?: { name: string; filename: string | null; size: number; sha256: string }[];
  replayed: boolean;
}

export type NotificationKind =
  | 'refund.created'
  | 'refund.updated'
  | 'refund.failed'
  | 'charge.refunded'
  | 'charge.dispute.created'
  | 'charge.dispute.closed'
  | 'payment_intent.succeeded'
  | 'payment_intent.payment_failed'
  | 'payment_intent.canceled'
  | 'customer.created';

/** How a PIX, boleto or OXXO PaymentIntent ends at Stripe: paid, its attempt failed or expired, or cancelled (through the API or the Dashboard). */
export type AsyncSettlement = 'paid' | 'failed' | 'expired' | 'canceled';

/**
 * What an event is about: the ledger's ids, or our payment id (`paymentId`: its PaymentIntent, with that
 * intent's latest refund and dispute; `charge.dispute.created` opens a dispute when it has none).
 */
export interface NotificationSubject {
  paymentId?: string;
  intentId?: string;
  refundId?: string;
  disputeId?: string;
}

export interface StripeDouble {
  url: string;
  ledger: Ledger;
  requests: RecordedRequest[];
  fault(f: StripeFault | null): void;
  /** Only this secret key is accepted when set (any sk_test_/sk_live_ key otherwise). */
  acceptOnlyKey(key: string | null): void;
  /** Search does not show intents younger than this (Stripe's search index lags writes by up to a minute). */
  searchLag(ms: number): void;
  /** Opens a dispute on a payment's charge (as an issuer's chargeback does). */
  openDispute(intentId: string, input?: { reason?: string; amount?: number }): string;
  /** Settles a dispute: won or lost. */
  closeDispute(disputeId: string, status: 'won' | 'lost'): void;
  /** A refund changes state later (asynchronous refunds). */
  settleRefund(refundId: string, status: 'succeeded' | 'failed'): void;
  /**
   * A PIX, boleto or OXXO intent waiting for the shopper ends as Stripe ends it: paid (succeeded, a charge
   * made), a failed or expired attempt (back to requires_payment_method with last_payment_error:
   * payment_intent_payment_attempt_failed / _expired), or cancelled. The webhook to send is
   * payment_intent.succeeded / payment_failed / canceled.
   */
  settleAsync(intentId: string, how: AsyncSettlement): void;
  /**
   * A webhook event about an object of the ledger, signed with `secret` as Stripe signs it.
   * `timestamp` (seconds) makes a stale one; `eventId` a re-delivery.
   */
  signedNotification(
    kind: NotificationKind,
    subject: NotificationSubject,
    secret: string,
    options?: { eventId?: string; timestamp?: number },
  ): { body: string; headers: Record<string, string> };
  close(): Promise<void>;
}

/** Stripe's test cards that decline (https://docs.stripe.com/testing#declined-payments). */
const TEST_CARD_DECLINES: Readonly<Record<string, { code: string; declineCode?: string }>> = {
  '4000000000000002': { code: 'card_declined', declineCode: 'generic_decline' },
  '4000000000009995': { code: 'card_declined', declineCode: 'insufficient_funds' },
  '4000000000009987': { code: 'card_declined', declineCode: 'lost_card' },
  '4000000000009979': { code: 'card_declined', declineCode: 'stolen_card' },
  '4000000000000069': { code: 'expired_card', declineCode: 'expired_card' },
  '4000000000000127': { code: 'incorrect_cvc', declineCode: 'incorrect_cvc' },
  '4000000000000119': { code: 'processing_error', declineCode: 'processing_error' },
};

/** Codes Stripe sends as the error's `code` (with the same decline_code); any other decline is card_declined + decline_code. */
const ERROR_LEVEL_CODES = new Set(['incorrect_cvc', 'invalid_cvc', 'incorrect_number', 'invalid_number', 'expired_card', 'invalid_expiry_year', 'processing_error', 'card_declined']);

const API_VERSION = (Stripe as unknown as { API_VERSION?: string }).API_VERSION ?? null;

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

interface StoredAnswer {
  fingerprint: string;
  reply: Reply;
}

export async function startStripeDouble(): Promise<StripeDouble> {
  const ledger: Ledger = { intents: new Map(), setups: new Map(), charges: new Map(), refunds: new Map(), disputes: new Map(), files: new Map() };
  const requests: RecordedRequest[] = [];
  const idempotency = new Map<string, StoredAnswer>();
  let fault: StripeFault | null = null;
  let onlyKey: string | null = null;
  let searchLagMs = 0;
  const now = () => Math.floor(Date.now() / 1000);
  const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks));
      } catch (err) {
        send(res, { status: 400, body: stripeError('invalid_request_error', 'parameter_invalid', (err as Error).message) });
      }
    });
  });

  function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://double');
    const method = req.method ?? 'GET';
    const contentType = req.headers['content-type'] ?? '';
    const multipart = contentType.startsWith('multipart/form-data');
    const parts = multipart ? decodeMultipart(raw, contentType) : undefined;
    const params = multipart ? Object.fromEntries(parts!.filter((p) => p.filename === null).map((p) => [p.name, p.data.toString('utf8')])) : decodeForm(method === 'GET' ? url.search.slice(1) : raw.toString('utf8'));
    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      idempotencyKey: key,
      params: redacted(params),
      ...(parts ? { parts: parts.map((p) => ({ name: p.name, filename: p.filename, size: p.data.length, sha256: createHash('sha256').update(p.data).digest('hex') })) } : {}),
      replayed: false,
    };
    requests.push(record);

    const apiKey = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (!/^(sk|rk)_(test|live)_[A-Za-z0-9_]{8,}$/.test(apiKey) || (onlyKey !== null && apiKey !== onlyKey)) {
      const shown = apiKey.length > 4 ? `${apiKey.slice(0, 8)}${'*'.repeat(8)}${apiKey.slice(-4)}` : '';
      return send(res, { status: 401, body: stripeError('invalid_request_error', null, `Invalid API Key provided: ${shown}`) });
    }

    const isCreate = method === 'POST' && (url.pathname === '/v1/payment_intents' || url.pathname === '/v1/setup_intents');
    const scope_ = fault?.on ?? 'create';
    const f = fault && (scope_ === 'all' || (scope_ === 'create' ? isCreate : scope_ === `${method} ${url.pathname}`)) ? fault : null;
    if (f && 'mode' in f && f.mode === 'error') return send(res, { status: 500, body: stripeError('api_error', null, 'An unknown error occurred') });

    // Idempotency: POSTs only, scoped to the account's key, compared on the parameters sent.
    const scope = key && method === 'POST' ? `${apiKey}\u0000${key}` : null;
    // Compared on what was sent, not on its bytes: a multipart body's boundary differs between two tries.
    const sent = parts ? JSON.stringify(record.parts!.map((p) => [p.name, p.filename, p.sha256])) : raw;
    const fingerprint = createHash('sha256').update(`${method} ${url.pathname}\u0000`).update(sent).digest('hex');
    const stored = scope ? idempotency.get(scope) : undefined;
    let reply: Reply;
    if (stored) {
      record.replayed = stored.fingerprint === fingerprint;
      reply = record.replayed
        ? { ...stored.reply, headers: { ...stored.reply.headers, 'idempotent-replayed': 'true' } }
        : {
            status: 400,
            body: stripeError('idempotency_error', null, `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`),
          };
    } else {
      reply = route(method, url, params, parts, apiKey, f && 'decline' in f ? f : null);
      // Stripe saves the answer once the endpoint started executing: not a parameter's validation failure, nor a 429.
      const code = (reply.body as { error?: { code?: string } }).error?.code ?? '';
      if (scope && reply.status !== 429 && !(reply.status === 400 && code.startsWith('parameter_'))) idempotency.set(scope, { fingerprint, reply });
    }

    if (f && 'mode' in f) {
      if (f.mode === 'timeout') return; // processed; the answer never comes (the socket is closed at close())
      if (f.mode === 'late') {
        setTimeout(() => send(res, reply), f.ms).unref();
        return;
      }
      if (f.mode === 'oversized') {
        const body = reply.body as Record<string, unknown>;
        return send(res, { ...reply, body: { ...body, metadata: { ...((body.metadata as object) ?? {}), padding: 'x'.repeat(70 * 1024) } } });
      }
    }
    send(res, reply);
  }

  function route(method: string, url: URL, params: Record<string, unknown>, parts: ReturnType<typeof decodeMultipart> | undefined, owner: string, decline: { decline: string; declineCode?: string | null; code?: string } | null): Reply {
    const path = url.pathname;
    let m: RegExpExecArray | null;
    if (method === 'POST' && path === '/v1/payment_intents') return createIntent(params, owner, decline);
    if (method === 'POST' && path === '/v1/setup_intents') return createSetup(params, owner, decline);
    if (method === 'GET' && path === '/v1/payment_intents/search') return searchIntents(params, owner);
    if ((m = /^\/v1\/payment_intents\/([^/]+)$/.exec(path))) {
      const pi = intentOf(m[1]!, owner);
      if (!pi) return missing('payment_intent', m[1]!);
      if (method === 'GET') return ok(paymentIntentObject(pi, ledger, expands(params, 'latest_charge')));
      if (method === 'POST') {
        Object.assign(pi.metadata, stringRecord(params.metadata));
        return ok(paymentIntentObject(pi, ledger, expands(params, 'latest_charge')));
      }
    }
    if (method === 'POST' && (m = /^\/v1\/payment_intents\/([^/]+)\/capture$/.exec(path))) return capture(m[1]!, params, owner);
    if (method === 'POST' && (m = /^\/v1\/payment_intents\/([^/]+)\/cancel$/.exec(path))) return cancel(m[1]!, owner);
    if (method === 'POST' && path === '/v1/refunds') return createRefund(params, owner);
    if (method === 'GET' && path === '/v1/refunds') {
      const intentId = String(params.payment_intent ?? '');
      const data = [...ledger.refunds.values()].filter((r) => r.intentId === intentId && intentOf(r.intentId, owner)).reverse().map(refundObject);
      return ok({ object: 'list', data, has_more: false, url: '/v1/refunds' });
    }
    if (method === 'POST' && path === '/v1/files') return createFile(params, parts, owner);
    if (method === 'POST' && (m = /^\/v1\/disputes\/([^/]+)$/.exec(path))) return updateDispute(m[1]!, params, owner);
    return { status: 404, body: stripeError('invalid_request_error', null, `Unrecognized request URL (${method}: ${path}).`) };
  }

  function createIntent(params: Record<string, unknown>, owner: string, decline: { decline: string; declineCode?: string | null; code?: string } | null): Reply {
    const amount = Number(params.amount);
    const currency = String(params.currency ?? '');
    if (!Number.isSafeInteger(amount) || amount < 1) return badParam('amount', 'This value must be greater than or equal to 1.');
    if (!/^[a-z]{3}$/.test(currency)) return badParam('currency', 'Invalid currency.');
    if (params.confirm !== 'true') {
      // An intent without a payment method (the adapter's placeholder that closes a reference): nothing charged.
      const pi = newIntent(params, owner, amount, currency, { last4: '', brand: 'unknown', expMonth: 0, expYear: 0, funding: 'unknown', country: 'US' });
      return ok(paymentIntentObject(pi, ledger, false));
    }
    const pmd = params.payment_method_data as { type?: string; card?: Record<string, string> } | undefined;
    if (pmd?.type === 'pix' || pmd?.type === 'boleto' || pmd?.type === 'oxxo') return createAsyncIntent(params, owner, amount, currency, pmd.type);
    const card = pmd?.card;
    if (pmd?.type !== 'card' || !card?.number || !card.exp_month || !card.exp_year) return { status: 400, body: stripeError('invalid_request_error', 'parameter_missing', 'Missing required param: payment_method_data[card][number].', 'payment_method_data[card][number]') };
    const number = card.number.replace(/\D/g, '');
    const pi = newIntent(params, owner, amount, currency, {
      last4: number.slice(-4),
      brand: number.startsWith('5') ? 'mastercard' : 'visa',
      expMonth: Number(card.exp_month),
      expYear: Number(card.exp_year),
      funding: 'credit',
      country: 'US',
    });
    const testDecline = TEST_CARD_DECLINES[number];
    const declined = decline
      ? declineError(decline.decline, decline.declineCode, decline.code)
      : testDecline
        ? declineError(testDecline.declineCode ?? testDecline.code, testDecline.declineCode ?? null, testDecline.code)
        : null;
    if (declined?.status === 429) {
      ledger.intents.delete(pi.id);
      return { status: 429, body: { error: declined.error } };
    }
    if (declined) {
      pi.lastError = declined.error;
      ledger.charges.set(pi.chargeId, { id: pi.chargeId, intentId: pi.id, status: 'failed', authorizationCode: null, failureCode: declined.error.code, failureMessage: declined.error.message, amountCaptured: 0, amountRefunded: 0, captured: false, disputed: false });
      return {
        status: 402,
        body: { error: { ...declined.error, charge: pi.chargeId, doc_url: `https://docs.stripe.com/error-codes/${declined.error.code}`, payment_intent: paymentIntentObject(pi, ledger, false), request_log_url: null } },
      };
    }
    const automatic = pi.captureMethod === 'automatic';
    pi.status = automatic ? 'succeeded' : 'requires_capture';
    pi.amountCapturable = automatic ? 0 : amount;
    pi.amountReceived = automatic ? amount : 0;
    ledger.charges.set(pi.chargeId, {
      id: pi.chargeId,
      intentId: pi.id,
      status: 'succeeded',
      authorizationCode: String(100000 + (parseInt(createHash('sha256').update(pi.id).digest('hex').slice(0, 8), 16) % 900000)),
      failureCode: null,
      failureMessage: null,
      amountCaptured: automatic ? amount : 0,
      amountRefunded: 0,
      captured: automatic,
      disputed: false,
    });
    return ok(paymentIntentObject(pi, ledger, expands(params, 'latest_charge')));
  }

  /**
   * A PaymentIntent confirmed with an asynchronous method (https://docs.stripe.com/payments/pix,
   * /boleto, /oxxo): only that type allowed, in its currency, with the payer details Stripe requires
   * (boleto: name, e-mail, address and tax_id; OXXO: name and e-mail), answered `requires_action` with the
   * method's next_action. The shopper pays (or not) later: settleAsync.
   */
  function createAsyncIntent(params: Record<string, unknown>, owner: string, amount: number, currency: string, type: AsyncIntentType): Reply {
    const allowed = params.allowed_payment_method_types ?? params.payment_method_types;
    if (!Array.isArray(allowed) || !allowed.includes(type)) {
      return { status: 400, body: stripeError('invalid_request_error', 'payment_intent_invalid_parameter', `The payment method type "${type}" is not allowed on this PaymentIntent: give allowed_payment_method_types[]=${type}.`, 'payment_method_data[type]') };
    }
    const wanted = type === 'oxxo' ? 'mxn' : 'brl';
    if (currency !== wanted) return { status: 400, body: stripeError('invalid_request_error', 'payment_intent_invalid_parameter', `The payment method type ${type} only supports ${wanted} (given ${currency}).`, 'currency') };
    const pmd = params.payment_method_data as { billing_details?: { name?: string; email?: string; address?: Record<string, string> }; boleto?: { tax_id?: string } };
    const missingParam = (param: string): Reply => ({ status: 400, body: stripeError('invalid_request_error', 'parameter_missing', `Missing required param: ${param}.`, param) });
    if (type !== 'pix') {
      if (!pmd.billing_details?.name) return missingParam('payment_method_data[billing_details][name]');
      if (!pmd.billing_details.email) return missingParam('payment_method_data[billing_details][email]');
    }
    if (type === 'boleto') {
      if (!/^(\d{11}|\d{14})$/.test(pmd.boleto?.tax_id ?? '')) return { status: 400, body: stripeError('invalid_request_error', 'tax_id_invalid', 'The tax ID must be a CPF (11 digits) or a CNPJ (14 digits).', 'payment_method_data[boleto][tax_id]') };
      const a = pmd.billing_details?.address;
      for (const field of ['line1', 'city', 'state', 'postal_code', 'country']) if (!a?.[field]) return missingParam(`payment_method_data[billing_details][address][${field}]`);
    }
    const options = ((params.payment_method_options ?? {}) as Record<string, Record<string, string>>)[type] ?? {};
    const pi = newIntent(params, owner, amount, currency, { last4: '', brand: type, expMonth: 0, expYear: 0, funding: 'unknown', country: type === 'oxxo' ? 'MX' : 'BR' });
    pi.method = type;
    pi.methodOptions = options;
    pi.status = 'requires_action';
    const digits = (n: number) => Array.from(randomBytes(n), (b) => String(b % 10)).join('');
    if (type === 'pix') {
      const seconds = Number(options.expires_after_seconds ?? 86_400);
      pi.nextAction = {
        type: 'pix_display_qr_code',
        pix_display_qr_code: {
          data: pixCode({ amountMinor: amount, reference: pi.id, key: '6b2f8a3e-1c4d-4e5f-9a7b-stripe-double', merchantName: 'STRIPE DOUBLE' }),
          expires_at: now() + seconds,
          hosted_instructions_url: `https://payments.stripe.com/pix/instructions/${pi.id}`,
          image_url_png: `https://qr.stripe.com/${pi.id}.png`,
          image_url_svg: `https://qr.stripe.com/${pi.id}.svg`,
        },
      };
    } else if (type === 'boleto') {
      const days = Number(options.expires_after_days ?? 3);
      pi.nextAction = {
        type: 'boleto_display_details',
        boleto_display_details: {
          expires_at: endOfDay(days, -3),
          hosted_voucher_url: `https://payments.stripe.com/boleto/voucher/${pi.id}`,
          number: `23790${digits(5)}${digits(11)}${digits(11)}${digits(1)}${digits(14)}`.slice(0, 47),
          pdf: `https://payments.stripe.com/boleto/voucher/${pi.id}/pdf`,
        },
      };
    } else {
      const days = Number(options.expires_after_days ?? 3);
      pi.nextAction = {
        type: 'oxxo_display_details',
        oxxo_display_details: { expires_after: endOfDay(days, -6), hosted_voucher_url: `https://payments.stripe.com/oxxo/voucher/${pi.id}`, number: referenceDigits(18) },
      };
    }
    return ok(paymentIntentObject(pi, ledger, expands(params, 'latest_charge')));
  }

  /** The end (23:59:59) of the day `days` from now, on a clock `offsetHours` from UTC (Stripe's vouchers expire at the end of their last day). */
  function endOfDay(days: number, offsetHours: number): number {
    const local = new Date(Date.now() + offsetHours * 3_600_000 + days * 86_400_000);
    return Math.floor(Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), 23, 59, 59) / 1000) - offsetHours * 3600;
  }

  function createSetup(params: Record<string, unknown>, owner: string, decline: { decline: string; declineCode?: string | null; code?: string } | null): Reply {
    if (params.confirm !== 'true') return badParam('confirm', 'The double only takes confirm=true.');
    const card = (params.payment_method_data as { type?: string; card?: Record<string, string> } | undefined)?.card;
    if (!card?.number || !card.exp_month || !card.exp_year) return { status: 400, body: stripeError('invalid_request_error', 'parameter_missing', 'Missing required param: payment_method_data[card][number].', 'payment_method_data[card][number]') };
    const number = card.number.replace(/\D/g, '');
    const si: SetupRecord = {
      id: newId('seti'),
      owner,
      status: 'succeeded',
      card: { last4: number.slice(-4), brand: number.startsWith('5') ? 'mastercard' : 'visa', expMonth: Number(card.exp_month), expYear: Number(card.exp_year), funding: 'credit', country: 'US' },
      metadata: stringRecord(params.metadata),
      lastError: null,
      created: now(),
    };
    ledger.setups.set(si.id, si);
    const testDecline = TEST_CARD_DECLINES[number];
    const declined = decline ? declineError(decline.decline, decline.declineCode, decline.code) : testDecline ? declineError(testDecline.declineCode ?? testDecline.code, testDecline.declineCode ?? null, testDecline.code) : null;
    if (declined?.status === 429) {
      ledger.setups.delete(si.id);
      return { status: 429, body: { error: declined.error } };
    }
    if (declined) {
      si.status = 'requires_payment_method';
      si.lastError = declined.error;
      return { status: 402, body: { error: { ...declined.error, doc_url: `https://docs.stripe.com/error-codes/${declined.error.code}`, setup_intent: setupIntentObject(si), request_log_url: null } } };
    }
    return ok(setupIntentObject(si));
  }

  function newIntent(params: Record<string, unknown>, owner: string, amount: number, currency: string, card: IntentRecord['card']): IntentRecord {
    const pi: IntentRecord = {
      id: newId('pi'),
      owner,
      amount,
      currency,
      captureMethod: params.capture_method === 'manual' ? 'manual' : 'automatic',
      status: 'requires_payment_method',
      amountCapturable: 0,
      amountReceived: 0,
      description: typeof params.description === 'string' ? params.description : null,
      statementDescriptorSuffix: typeof params.statement_descriptor_suffix === 'string' ? params.statement_descriptor_suffix : null,
      metadata: stringRecord(params.metadata),
      created: now(),
      createdMs: Date.now(),
      canceledAt: null,
      cancellationReason: null,
      chargeId: newId('ch'),
      card,
      lastError: null,
      method: 'card',
      nextAction: null,
      methodOptions: null,
    };
    ledger.intents.set(pi.id, pi);
    return pi;
  }

  function capture(id: string, params: Record<string, unknown>, owner: string): Reply {
    const pi = intentOf(id, owner);
    if (!pi) return missing('payment_intent', id);
    if (pi.status !== 'requires_capture') return unexpectedState(pi, 'capture');
    const amount = params.amount_to_capture === undefined ? pi.amountCapturable : Number(params.amount_to_capture);
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > pi.amountCapturable) return badParam('amount_to_capture', `Amount to capture must be at most ${pi.amountCapturable}.`, 'amount_too_large');
    const charge = ledger.charges.get(pi.chargeId)!;
    Object.assign(pi.metadata, stringRecord(params.metadata));
    pi.status = 'succeeded';
    pi.amountReceived = amount;
    pi.amountCapturable = 0;
    charge.captured = true;
    charge.amountCaptured = amount;
    return ok(paymentIntentObject(pi, ledger, false));
  }

  function cancel(id: string, owner: string): Reply {
    const pi = intentOf(id, owner);
    if (!pi) return missing('payment_intent', id);
    if (pi.status === 'succeeded' || pi.status === 'canceled') return unexpectedState(pi, 'cancel');
    pi.status = 'canceled';
    pi.amountCapturable = 0;
    pi.canceledAt = now();
    pi.cancellationReason = 'requested_by_customer';
    return ok(paymentIntentObject(pi, ledger, false));
  }

  function createRefund(params: Record<string, unknown>, owner: string): Reply {
    const pi = intentOf(String(params.payment_intent ?? ''), owner);
    if (!pi) return missing('payment_intent', String(params.payment_intent ?? ''));
    const charge = ledger.charges.get(pi.chargeId)!;
    if (pi.status !== 'succeeded') return unexpectedState(pi, 'refund');
    const left = charge.amountCaptured - charge.amountRefunded;
    if (left <= 0) return { status: 400, body: stripeError('invalid_request_error', 'charge_already_refunded', `Charge ${charge.id} has already been refunded.`) };
    const amount = params.amount === undefined ? left : Number(params.amount);
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > left) return badParam('amount', `Refund amount (${amount}) is greater than unrefunded amount on charge (${left}).`, 'amount_too_large');
    const refund: RefundRecord = { id: newId('re'), intentId: pi.id, chargeId: charge.id, amount, currency: pi.currency, status: 'succeeded', failureReason: null, metadata: stringRecord(params.metadata), created: now() };
    ledger.refunds.set(refund.id, refund);
    charge.amountRefunded += amount;
    return ok(refundObject(refund));
  }

  function searchIntents(params: Record<string, unknown>, owner: string): Reply {
    const { clauses, mode } = decodeSearch(String(params.query ?? ''));
    const matches = (pi: IntentRecord) => (mode === 'OR' ? clauses.some((c) => pi.metadata[c.key] === c.value) : clauses.every((c) => pi.metadata[c.key] === c.value));
    const expand = expands(params, 'data.latest_charge');
    const indexed = (pi: IntentRecord) => Date.now() - pi.createdMs >= searchLagMs;
    const data = [...ledger.intents.values()].filter((pi) => pi.owner === owner && indexed(pi) && matches(pi)).reverse().map((pi) => paymentIntentObject(pi, ledger, expand));
    return ok({ object: 'search_result', data, has_more: false, next_page: null, url: '/v1/payment_intents/search' });
  }

  function createFile(params: Record<string, unknown>, parts: ReturnType<typeof decodeMultipart> | undefined, owner: string): Reply {
    const file = parts?.find((p) => p.name === 'file' && p.filename !== null);
    if (!file) return { status: 400, body: stripeError('invalid_request_error', 'parameter_missing', 'Missing required param: file.', 'file') };
    if (params.purpose !== 'dispute_evidence') return badParam('purpose', 'The double only takes purpose dispute_evidence.');
    const type = /\.([A-Za-z0-9]+)$/.exec(file.filename!)?.[1]?.toLowerCase() ?? 'pdf';
    const record = { id: newId('file'), owner, purpose: 'dispute_evidence', filename: file.filename!, size: file.data.length, type, sha256: createHash('sha256').update(file.data).digest('hex'), created: now() };
    ledger.files.set(record.id, record);
    return ok(fileObject(record));
  }

  function updateDispute(id: string, params: Record<string, unknown>, owner: string): Reply {
    const dispute = ledger.disputes.get(id);
    if (!dispute || !intentOf(dispute.intentId, owner)) return missing('dispute', id);
    if (dispute.status === 'won' || dispute.status === 'lost') return { status: 400, body: stripeError('invalid_request_error', null, 'This dispute is already closed.') };
    const evidence = (params.evidence ?? {}) as Record<string, unknown>;
    // As Stripe: evidence can be staged (submit=false) and changed until it is submitted; a submission
    // cannot be undone, and a submitted dispute takes no more evidence (metadata alone may still change).
    const changesEvidence = Object.keys(evidence).length > 0 || params.submit === 'true';
    if (dispute.submissionCount > 0 && changesEvidence) {
      return { status: 400, body: stripeError('invalid_request_error', null, 'This dispute has already been submitted; its evidence can no longer be updated.') };
    }
    for (const [field, value] of Object.entries(evidence)) {
      if (!EVIDENCE_FIELD_NAMES.has(field)) return badParam(`evidence[${field}]`, `Received unknown parameter: evidence[${field}]`);
      if (EVIDENCE_FILE_FIELDS.has(field)) {
        const file = ledger.files.get(String(value));
        if (!file || file.owner !== owner || file.purpose !== 'dispute_evidence') return missing('file', String(value));
      }
      dispute.evidence[field] = String(value);
    }
    Object.assign(dispute.metadata, stringRecord(params.metadata));
    if (params.submit === 'true') {
      dispute.status = 'under_review';
      dispute.submissionCount += 1;
    }
    return ok(disputeObject(dispute));
  }

  const intentOf = (id: string, owner: string) => {
    const pi = ledger.intents.get(id);
    return pi && pi.owner === owner ? pi : undefined;
  };

  /** A subject named by our payment id: its PaymentIntent, that intent's latest refund and dispute (one opened for a new dispute). */
  function resolve(kind: NotificationKind, subject: NotificationSubject): NotificationSubject {
    if (!subject.paymentId) return subject;
    // A card's approved intent; an asynchronous one in whatever state (a failed attempt leaves it requires_payment_method).
    const pi = [...ledger.intents.values()].reverse().find((i) => i.metadata.payorch_payment_id === subject.paymentId && (i.method !== 'card' || i.status !== 'requires_payment_method'));
    if (!pi) throw new Error(`the double has no approved PaymentIntent of payment ${subject.paymentId}`);
    const refund = [...ledger.refunds.values()].reverse().find((r) => r.intentId === pi.id);
    let dispute = [...ledger.disputes.values()].reverse().find((d) => d.intentId === pi.id);
    if (!dispute && kind === 'charge.dispute.created') dispute = ledger.disputes.get(double.openDispute(pi.id))!;
    return { intentId: pi.id, refundId: subject.refundId ?? refund?.id, disputeId: subject.disputeId ?? dispute?.id };
  }

  const signNotification: StripeDouble['signedNotification'] = (kind, named, secret, options = {}) => {
    const subject = resolve(kind, named);
    let object: Record<string, unknown>;
    if (kind === 'refund.created' || kind === 'refund.updated' || kind === 'refund.failed') {
      object = refundObject(ledger.refunds.get(subject.refundId ?? '')!);
    } else if (kind === 'charge.refunded') {
      const pi = ledger.intents.get(subject.intentId ?? '')!;
      object = chargeObject(ledger.charges.get(pi.chargeId)!, pi, ledger);
    } else if (kind === 'payment_intent.succeeded' || kind === 'payment_intent.payment_failed' || kind === 'payment_intent.canceled') {
      object = paymentIntentObject(ledger.intents.get(subject.intentId ?? '')!, ledger, false);
    } else if (kind === 'charge.dispute.created' || kind === 'charge.dispute.closed') {
      object = disputeObject(ledger.disputes.get(subject.disputeId ?? '')!);
    } else {
      object = { id: newId('cus'), object: 'customer', created: now(), livemode: false, metadata: {} };
    }
    const timestamp = options.timestamp ?? now();
    const body = JSON.stringify(eventObject(options.eventId ?? newId('evt'), kind, object, timestamp, API_VERSION), null, 2);
    const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp });
    return { body, headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header } };
  };

  // A provider's edge keeps idle connections open far longer than our client does (fetch drops them after
  // the few seconds the Keep-Alive hint allows): with Node's 5 s default, a loaded run could reuse a socket
  // the double was closing at that instant, a CONNECTION_CUT no real provider would cause.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const double: StripeDouble = {
    url: `http://127.0.0.1:${port}`,
    ledger,
    requests,
    fault: (f) => {
      fault = f;
    },
    acceptOnlyKey: (key) => {
      onlyKey = key;
    },
    searchLag: (ms) => {
      searchLagMs = ms;
    },
    openDispute(intentId, input = {}) {
      const pi = ledger.intents.get(intentId);
      if (!pi) throw new Error(`no payment intent ${intentId}`);
      const charge = ledger.charges.get(pi.chargeId)!;
      charge.disputed = true;
      const id = newId('dp');
      ledger.disputes.set(id, {
        id,
        intentId,
        chargeId: charge.id,
        amount: input.amount ?? charge.amountCaptured,
        currency: pi.currency,
        reason: input.reason ?? 'fraudulent',
        networkReasonCode: input.reason === 'product_not_received' ? '13.1' : '10.4',
        status: 'needs_response',
        evidence: emptyEvidence(),
        submissionCount: 0,
        metadata: {},
        created: now(),
      });
      return id;
    },
    closeDispute(disputeId, status) {
      ledger.disputes.get(disputeId)!.status = status;
    },
    settleAsync(intentId, how) {
      const pi = ledger.intents.get(intentId);
      if (!pi || pi.method === 'card') throw new Error(`no asynchronous payment intent ${intentId}`);
      if (pi.status !== 'requires_action') throw new Error(`payment intent ${intentId} is ${pi.status}, not waiting for the shopper`);
      if (how === 'paid') {
        pi.status = 'succeeded';
        pi.amountReceived = pi.amount;
        ledger.charges.set(pi.chargeId, { id: pi.chargeId, intentId: pi.id, status: 'succeeded', authorizationCode: null, failureCode: null, failureMessage: null, amountCaptured: pi.amount, amountRefunded: 0, captured: true, disputed: false });
      } else if (how === 'canceled') {
        pi.status = 'canceled';
        pi.canceledAt = now();
        pi.cancellationReason = 'requested_by_customer';
      } else {
        pi.status = 'requires_payment_method';
        pi.lastError =
          how === 'expired'
            ? { type: 'invalid_request_error', code: 'payment_intent_payment_attempt_expired', message: `The ${pi.method} payment was not completed before it expired.` }
            : { type: 'invalid_request_error', code: 'payment_intent_payment_attempt_failed', message: `The latest ${pi.method} payment attempt of this PaymentIntent has failed.` };
      }
    },
    settleRefund(refundId, status) {
      const refund = ledger.refunds.get(refundId)!;
      if (refund.status === status) return;
      if (status === 'failed') {
        ledger.charges.get(refund.chargeId)!.amountRefunded -= refund.amount;
        refund.failureReason = 'expired_or_canceled_card';
      }
      refund.status = status;
    },
    signedNotification: signNotification,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return double;
}

function declineError(code: string, declineCode?: string | null, errorCode?: string): { status: 402 | 429; error: DeclineError } {
  if (code === 'rate_limit') return { status: 429, error: { type: 'rate_limit_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly.' } as unknown as DeclineError };
  const level = errorCode ?? (ERROR_LEVEL_CODES.has(code) ? code : 'card_declined');
  const decline = declineCode === undefined ? code : declineCode;
  return {
    status: 402,
    error: {
      type: 'card_error',
      code: level,
      ...(decline ? { decline_code: decline } : {}),
      message: level === 'card_declined' ? 'Your card was declined.' : `Your card was declined (${level}).`,
    },
  };
}

const ok = (body: unknown): Reply => ({ status: 200, body });
const missing = (what: string, id: string): Reply => ({ status: 404, body: stripeError('invalid_request_error', 'resource_missing', `No such ${what}: '${id}'`, 'id') });
const badParam = (param: string, message: string, code = 'parameter_invalid_integer'): Reply => ({ status: 400, body: stripeError('invalid_request_error', code, message, param) });
const unexpectedState = (pi: IntentRecord, action: string): Reply => ({
  status: 400,
  body: stripeError('invalid_request_error', 'payment_intent_unexpected_state', `This PaymentIntent's ${action} could not be performed because it has a status of ${pi.status}.`),
});

function stripeError(type: string, code: string | null, message: string, param?: string): { error: Record<string, unknown> } {
  return { error: { type, ...(code ? { code, doc_url: `https://docs.stripe.com/error-codes/${code.replace(/_/g, '-')}` } : {}), message, ...(param ? { param } : {}), request_log_url: null } };
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.writableEnded || res.destroyed) return;
  const body = JSON.stringify(reply.body);
  res.writeHead(reply.status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(7).toString('hex')}`, 'stripe-version': API_VERSION ?? 'unknown', ...reply.headers });
  res.end(body);
}

function expands(params: Record<string, unknown>, what: string): boolean {
  const e = params.expand;
  return Array.isArray(e) ? e.includes(what) : e === what;
}

function stringRecord(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null) return {};
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
}

/** The parameters as the log keeps them: a card number cut to its last four digits, no security code. */
function redacted(params: Record<string, unknown>): Record<string, unknown> {
  const pmd = params.payment_method_data as { card?: Record<string, unknown> } | undefined;
  if (!pmd?.card) return params;
  const { number, cvc: _cvc, ...card } = pmd.card;
  return { ...params, payment_method_data: { ...pmd, card: { ...card, last4: String(number ?? '').slice(-4) } } };
}

