/**
 * A local Mercado Pago: the part of its API the connector uses, in its published shapes (the answers are
 * typed by the `mercadopago` package: PaymentResponse, CardTokenResponse, RefundResponse, PaymentSearch),
 * over plain node:http on an ephemeral port.
 *
 * It keeps its own ledger (authorizations, captures up to the authorized amount, refunds up to the captured
 * amount, cancellations of authorizations only), answers a repeated X-Idempotency-Key with its first answer
 * (never a second charge), and signs notifications as Mercado Pago does (x-signature over the manifest
 * `id:{data.id};request-id:{x-request-id};ts:{ts};`).
 *
 * Chargeback documentation is taken while the case asks for it (open, documentation_required, before its
 * deadline); a case decided (`decideChargeback`) refuses more with a 400.
 *
 * Each account (access token, webhook secret) is made here (`account()`), and can be told how to behave on
 * its next calls (`behave`): decline with a status_detail, answer an error, stay in process, time out (the
 * payment is made and no answer comes), answer late, fail (HTTP 500, nothing made) or answer a body past
 * our 64 KiB limit. Its request log redacts card numbers, security codes and tokens before keeping them.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  CardTokenResponse,
  ChargebackResponse,
  PaymentResponse,
  PaymentSearch,
  RefundResponse,
} from '../../../src/providers/mercado-pago/sdk-types.js';
import type { MercadoPagoChargeback } from '../../../src/providers/mercado-pago/notifications.js';
import { pixCode } from '../pix-code.js';

type Plain<T> = Omit<T, 'api_response'>;
export type DoublePayment = Plain<PaymentResponse> & { id: number; refunds: Plain<RefundResponse>[] };
export type DoubleChargeback = MercadoPagoChargeback & { id: string };

export interface Behaviour {
  /** Which calls it applies to: payment creation (default) or every call of the account. */
  on?: 'payment' | 'any';
  /** A rejected payment with this status_detail (e.g. cc_rejected_high_risk). */
  decline?: string;
  /** An error answer instead: HTTP status and Mercado Pago's `error` field. */
  error?: { status: number; error: string };
  /** The payment stays `in_process` (pending_contingency). */
  inProcess?: boolean;
  /** timeout: processed, never answered. late: processed, answered after lateMs. fail: HTTP 500, nothing processed. oversized: processed, a 100 KiB answer. */
  fault?: 'timeout' | 'late' | 'fail' | 'oversized';
  lateMs?: number;
  /**
   * The card payment created is left out of /v1/payments/search for this long (Mercado Pago's search is
   * eventually consistent: a payment just made, or still processing, is not found by its external_reference yet).
   */
  hiddenFromSearchMs?: number;
  /** Refunds are accepted `in_process` (settled later by settleRefund). */
  asyncRefunds?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  /** The body, card number, security code and card token redacted; multipart bodies as their file list. */
  body: unknown;
}

export interface DoubleAccount {
  access_token: string;
  webhook_secret: string;
}

interface Account extends DoubleAccount {
  currency: string;
  collectorId: number;
  behaviour: Behaviour | null;
}

interface Stored {
  status: number;
  body: unknown;
}

const DECIMALS: Record<string, number> = { CLP: 0, COP: 0 };

export interface MercadoPagoDouble {
  url: string;
  /** A new account (its credentials go into a connection); `currency` is its country's (default BRL). */
  account(options?: { currency?: string }): DoubleAccount;
  behave(accessToken: string, behaviour: Behaviour | null): void;
  readonly requests: RecordedRequest[];
  payment(id: number | string): DoublePayment | undefined;
  /** Payments made for an external_reference (more than one would be a double charge). */
  paymentsFor(externalReference: string): DoublePayment[];
  /**
   * A pending PIX or boleto payment ends as Mercado Pago ends it: paid (approved, accredited), rejected,
   * cancelled (by_collector) or expired (cancelled with status_detail expired, as Mercado Pago does when
   * date_of_expiration passes). Its `payment` notification then says so.
   */
  settlePending(id: number | string, outcome: 'approved' | 'rejected' | 'cancelled' | 'expired'): void;
  /** Settles an in-process refund (asyncRefunds). */
  settleRefund(refundId: number, status: 'approved' | 'rejected'): void;
  openChargeback(paymentId: number, options?: { reasonId?: string; reason?: string }): DoubleChargeback;
  decideChargeback(id: string, outcome: 'WON' | 'LOST'): void;
  /** Documentation received per chargeback (file name, type, SHA-256). */
  documentation(chargebackId: string): { name: string; type: string; sha256: string; size: number }[];
  /** A notification as Mercado Pago would POST it, signed with the account's webhook secret. */
  signedNotification(
    kind: 'payment' | 'chargeback' | 'other',
    id: number | string,
    options?: { secret?: string; ts?: number; requestId?: string; notificationId?: number },
  ): { body: string; headers: Record<string, string> };
  close(): Promise<void>;
}

export async function startMercadoPagoDouble(): Promise<MercadoPagoDouble> {
  const accounts = new Map<string, Account>();
  const tokens = new Map<string, { account: string; firstSix: string; lastFour: string; holder: string; month: number; year: number; used: boolean }>();
  const payments = new Map<number, DoublePayment & { owner: string }>();
  /** Payments the search shows only from this time on (hiddenFromSearchMs). */
  const searchableFrom = new Map<number, number>();
  const chargebacks = new Map<string, DoubleChargeback & { owner: string }>();
  const documents = new Map<string, { name: string; type: string; sha256: string; size: number }[]>();
  const idempotent = new Map<string, Stored>();
  const requests: RecordedRequest[] = [];
  const held = new Set<ServerResponse>();
  let nextPayment = 1_310_000_000;
  let nextRefund = 2_050_000_000;
  // 18 digits like Mercado Pago's (e.g. 233000061680860000), but starting with 1: its own start with 2, in the
  // Mastercard 2-series range, and one in ten passes Luhn, which the sensitive-data scan rightly reads as a card number.
  let nextChargeback = 133_000_061_680_860_000n;
  let nextCollector = 634_060_000;

  const now = () => new Date().toISOString();
  const round = (n: number, currency: string) => Number(n.toFixed(DECIMALS[currency] ?? 2));
  const errorBody = (status: number, error: string, message: string) => ({ message, error, status, cause: [] as unknown[] });

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => send(res, 500, errorBody(500, 'internal_error', String(err))));
  });

  function send(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  async function readBody(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  function redact(value: unknown): unknown {
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (k === 'card_number' && typeof v === 'string') out[k] = `${v.slice(0, 6)}******${v.slice(-4)}`;
      else if (k === 'security_code' || k === 'token') out[k] = '[REDACTED]';
      else out[k] = typeof v === 'object' ? redact(v) : v;
    }
    return out;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://double');
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    const contentType = req.headers['content-type'] ?? '';
    const key = typeof req.headers['x-idempotency-key'] === 'string' ? req.headers['x-idempotency-key'] : undefined;
    let body: unknown;
    if (contentType.startsWith('multipart/form-data')) {
      const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData();
      const files: { name: string; type: string; sha256: string; size: number }[] = [];
      for (const [, v] of form.entries()) {
        if (typeof v === 'string') continue;
        const bytes = Buffer.from(await v.arrayBuffer());
        files.push({ name: v.name, type: v.type, sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length });
      }
      body = { files };
    } else if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return send(res, 400, errorBody(400, 'bad_request', 'body is not JSON'));
      }
    }
    requests.push({ method, path: url.pathname + url.search, idempotencyKey: key, body: redact(body) });

    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const account = auth ? accounts.get(auth) : undefined;
    if (!account) return send(res, 401, errorBody(401, 'unauthorized', 'invalid access token'));
    const behaviour = account.behaviour;
    const isPaymentCreation = method === 'POST' && url.pathname === '/v1/payments';
    const applies = behaviour !== null && (behaviour.on === 'any' || isPaymentCreation);
    if (applies && behaviour.fault === 'fail') return send(res, 500, errorBody(500, 'internal_error', 'internal error'));

    // Writes: the same key (per account and route) gets the first answer, and nothing happens twice.
    const storeKey = method !== 'GET' && key ? `${account.access_token}\u0000${method} ${url.pathname}\u0000${key}` : undefined;
    if (method !== 'GET' && !key) return send(res, 400, errorBody(400, 'bad_request', 'X-Idempotency-Key header is required'));
    let answer = storeKey ? idempotent.get(storeKey) : undefined;
    if (!answer) {
      answer = route(method, url, body, account, applies ? behaviour : null);
      if (storeKey && answer.status < 500) idempotent.set(storeKey, answer);
    }
    if (applies && behaviour.fault === 'timeout') {
      held.add(res);
      return;
    }
    if (applies && behaviour.fault === 'late') await new Promise((r) => setTimeout(r, behaviour.lateMs ?? 1_000));
    if (applies && behaviour.fault === 'oversized') return send(res, answer.status, { ...(answer.body as object), padding: 'x'.repeat(100 * 1024) });
    send(res, answer.status, answer.body);
  }

  function route(method: string, url: URL, body: unknown, account: Account, behaviour: Behaviour | null): Stored {
    const b = (body ?? {}) as Record<string, unknown>;
    if (behaviour?.error) return { status: behaviour.error.status, body: errorBody(behaviour.error.status, behaviour.error.error, 'refused by the double') };
    const p = url.pathname;
    if (method === 'POST' && p === '/v1/card_tokens') return cardToken(b, account);
    if (method === 'POST' && p === '/v1/payments') return createPayment(b, account, behaviour);
    if (method === 'GET' && p === '/v1/payments/search') return search(url, account);
    let m = /^\/v1\/payments\/(\d+)$/.exec(p);
    if (m && method === 'GET') return withPayment(m[1]!, account, (pay) => ({ status: 200, body: view(pay) }));
    if (m && method === 'PUT') return withPayment(m[1]!, account, (pay) => updatePayment(pay, b));
    m = /^\/v1\/payments\/(\d+)\/refunds$/.exec(p);
    if (m && method === 'POST') return withPayment(m[1]!, account, (pay) => refund(pay, b, behaviour));
    m = /^\/v1\/chargebacks\/(\d+)$/.exec(p);
    if (m && method === 'GET') return withChargeback(m[1]!, account, (cb) => ({ status: 200, body: viewChargeback(cb) }));
    m = /^\/v1\/chargebacks\/(\d+)\/documentation$/.exec(p);
    if (m && method === 'POST') return withChargeback(m[1]!, account, (cb) => receiveDocumentation(cb, b));
    return { status: 404, body: errorBody(404, 'not_found', `no route ${method} ${p}`) };
  }

  function cardToken(b: Record<string, unknown>, account: Account): Stored {
    const number = String(b.card_number ?? '');
    const month = Number(b.expiration_month);
    const year = Number(b.expiration_year);
    if (!/^\d{13,19}$/.test(number) || !(month >= 1 && month <= 12) || !(year >= 2000 && year <= 2099) || typeof b.expiration_month !== 'string' || typeof b.expiration_year !== 'string') {
      return { status: 400, body: errorBody(400, 'bad_request', 'invalid card data') };
    }
    const id = randomBytes(16).toString('hex');
    const holder = String((b.cardholder as { name?: unknown } | undefined)?.name ?? '');
    tokens.set(id, { account: account.access_token, firstSix: number.slice(0, 6), lastFour: number.slice(-4), holder, month, year, used: false });
    const answer: Plain<CardTokenResponse> = {
      id,
      first_six_digits: number.slice(0, 6),
      last_four_digits: number.slice(-4),
      expiration_month: month,
      expiration_year: year,
      status: 'active',
      luhn_validation: true,
      live_mode: false,
      require_esc: false,
      card_number_length: number.length,
      security_code_length: typeof b.security_code === 'string' ? b.security_code.length : 0,
      date_created: now(),
      date_last_updated: now(),
      date_due: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    };
    return { status: 201, body: answer };
  }

  /** Mercado Pago's test cardholder names choose the outcome in its sandbox; the double honours a few. */
  const HOLDER_OUTCOME: Record<string, string> = {
    OTHE: 'cc_rejected_other_reason',
    CALL: 'cc_rejected_call_for_authorize',
    FUND: 'cc_rejected_insufficient_amount',
    SECU: 'cc_rejected_bad_filled_security_code',
    EXPI: 'cc_rejected_bad_filled_date',
    FORM: 'cc_rejected_bad_filled_other',
  };

  function createPayment(b: Record<string, unknown>, account: Account, behaviour: Behaviour | null): Stored {
    if (b.payment_method_id === 'pix' || b.payment_method_id === 'bolbradesco') return createPendingPayment(b, account, behaviour);
    const amount = b.transaction_amount;
    const decimals = DECIMALS[account.currency] ?? 2;
    const problems: string[] = [];
    if (typeof amount !== 'number' || !(amount > 0) || Number(amount.toFixed(decimals)) !== amount) problems.push('transaction_amount');
    if (typeof b.token !== 'string') problems.push('token');
    if (typeof b.payment_method_id !== 'string' || b.payment_method_id === '') problems.push('payment_method_id');
    if (b.installments !== 1) problems.push('installments');
    if (typeof (b.payer as { email?: unknown } | undefined)?.email !== 'string') problems.push('payer.email');
    if (problems.length > 0) return { status: 400, body: { ...errorBody(400, 'bad_request', `invalid parameters: ${problems.join(', ')}`), cause: problems.map((p) => ({ code: 4000, description: `${p} is invalid` })) } };
    const token = tokens.get(b.token as string);
    if (!token || token.account !== account.access_token || token.used) return { status: 400, body: errorBody(400, 'bad_request', 'invalid card token') };
    token.used = true;
    const capture = b.capture !== false;
    const decline = behaviour?.decline ?? HOLDER_OUTCOME[token.holder];
    const status = decline ? 'rejected' : behaviour?.inProcess ? 'in_process' : capture ? 'approved' : 'authorized';
    const statusDetail = decline ?? (behaviour?.inProcess ? 'pending_contingency' : capture ? 'accredited' : 'pending_capture');
    const id = nextPayment++;
    const payment: DoublePayment & { owner: string } = {
      owner: account.access_token,
      id,
      date_created: now(),
      date_last_updated: now(),
      ...(status === 'approved' ? { date_approved: now() } : {}),
      operation_type: 'regular_payment',
      payment_method_id: b.payment_method_id as string,
      payment_type_id: 'credit_card',
      status,
      status_detail: statusDetail,
      currency_id: account.currency,
      description: typeof b.description === 'string' ? b.description : undefined,
      live_mode: false,
      ...(status === 'approved' || status === 'authorized' ? { authorization_code: String(100000 + (id % 900000)) } : {}),
      collector_id: account.collectorId,
      payer: { email: (b.payer as { email: string }).email },
      metadata: (b.metadata as Record<string, unknown> | undefined) ?? {},
      external_reference: typeof b.external_reference === 'string' ? b.external_reference : undefined,
      transaction_amount: amount as number,
      transaction_amount_refunded: 0,
      installments: 1,
      captured: status === 'approved',
      binary_mode: b.binary_mode === true,
      statement_descriptor: typeof b.statement_descriptor === 'string' ? b.statement_descriptor : undefined,
      card: { first_six_digits: token.firstSix, last_four_digits: token.lastFour, expiration_month: token.month, expiration_year: token.year, cardholder: { name: token.holder } },
      refunds: [],
      processing_mode: 'aggregator',
    };
    payments.set(id, payment);
    if (behaviour?.hiddenFromSearchMs) searchableFrom.set(id, Date.now() + behaviour.hiddenFromSearchMs);
    return { status: 201, body: view(payment) };
  }

  /**
   * A PIX (`pix`) or boleto (`bolbradesco`) payment: no card token; Brazil's currency only; a payer e-mail,
   * and for a boleto the payer's name, CPF/CNPJ and address (https://www.mercadopago.com.br/developers,
   * "Pix" and "Boleto"). Created `pending` with the QR code (point_of_interaction.transaction_data) or the
   * boleto (transaction_details.barcode, digitable_line, external_resource_url) and its date_of_expiration;
   * settled later (settlePending) as the shopper pays or the deadline passes.
   */
  function createPendingPayment(b: Record<string, unknown>, account: Account, behaviour: Behaviour | null): Stored {
    const pix = b.payment_method_id === 'pix';
    const amount = b.transaction_amount;
    const payer = (b.payer ?? {}) as { email?: unknown; first_name?: unknown; last_name?: unknown; identification?: { type?: unknown; number?: unknown }; address?: Record<string, unknown> };
    const problems: string[] = [];
    if (account.currency !== 'BRL') problems.push('payment_method_id (only in Brazil)');
    if (typeof amount !== 'number' || !(amount > 0) || Number(amount.toFixed(2)) !== amount) problems.push('transaction_amount');
    if (typeof payer.email !== 'string') problems.push('payer.email');
    if (typeof b.date_of_expiration === 'string' && !Number.isFinite(Date.parse(b.date_of_expiration))) problems.push('date_of_expiration');
    if (!pix) {
      if (typeof payer.first_name !== 'string' || typeof payer.last_name !== 'string') problems.push('payer.first_name / last_name');
      const idType = payer.identification?.type;
      const idNumber = String(payer.identification?.number ?? '');
      if (!((idType === 'CPF' && /^\d{11}$/.test(idNumber)) || (idType === 'CNPJ' && /^\d{14}$/.test(idNumber)))) problems.push('payer.identification');
      for (const field of ['zip_code', 'street_name', 'street_number', 'neighborhood', 'city', 'federal_unit']) if (typeof payer.address?.[field] !== 'string' || payer.address[field] === '') problems.push(`payer.address.${field}`);
    }
    if (problems.length > 0) return { status: 400, body: { ...errorBody(400, 'bad_request', `invalid parameters: ${problems.join(', ')}`), cause: problems.map((p) => ({ code: 4000, description: `${p} is invalid` })) } };
    const id = nextPayment++;
    const expiresAt = typeof b.date_of_expiration === 'string' ? new Date(b.date_of_expiration) : new Date(Date.now() + (pix ? 86_400_000 : 3 * 86_400_000));
    const digits = (n: number) => Array.from(randomBytes(n), (x) => String(x % 10)).join('');
    const barcode = `2379${digits(40)}`;
    const payment: DoublePayment & { owner: string } = {
      owner: account.access_token,
      id,
      date_created: now(),
      date_last_updated: now(),
      // Brasília time, as Mercado Pago writes its dates for a Brazilian account.
      date_of_expiration: brasilia(expiresAt),
      operation_type: 'regular_payment',
      payment_method_id: b.payment_method_id as string,
      payment_type_id: pix ? 'bank_transfer' : 'ticket',
      status: behaviour?.decline ? 'rejected' : 'pending',
      status_detail: behaviour?.decline ?? (pix ? 'pending_waiting_transfer' : 'pending_waiting_payment'),
      currency_id: account.currency,
      description: typeof b.description === 'string' ? b.description : undefined,
      live_mode: false,
      collector_id: account.collectorId,
      payer: { email: payer.email as string },
      metadata: (b.metadata as Record<string, unknown> | undefined) ?? {},
      external_reference: typeof b.external_reference === 'string' ? b.external_reference : undefined,
      transaction_amount: amount as number,
      transaction_amount_refunded: 0,
      installments: 1,
      captured: true,
      binary_mode: false,
      refunds: [],
      processing_mode: 'aggregator',
      ...(pix
        ? {
            point_of_interaction: {
              type: 'PIX',
              transaction_data: {
                qr_code: pixCode({ amountMinor: Math.round((amount as number) * 100), reference: `MP${id}`, key: `mp-double-${String(id).padStart(12, '0')}`, merchantName: 'MERCADO PAGO' }),
                qr_code_base64: Buffer.from(`qr-${id}`).toString('base64'),
                ticket_url: `https://www.mercadopago.com.br/payments/${id}/ticket?caller_id=${account.collectorId}`,
              },
            },
          }
        : {
            transaction_details: {
              external_resource_url: `https://www.mercadopago.com.br/payments/${id}/ticket?caller_id=${account.collectorId}&payment_method_id=bolbradesco`,
              barcode: { content: barcode },
              digitable_line: `${barcode.slice(0, 4)}${barcode.slice(19, 24)}0${barcode.slice(24, 34)}0${barcode.slice(34, 44)}0${barcode[4]}${barcode.slice(5, 19)}`,
              verification_code: String(id),
              total_paid_amount: amount as number,
              net_received_amount: 0,
              overpaid_amount: 0,
              installment_amount: 0,
            },
          }),
    };
    payments.set(id, payment);
    return { status: 201, body: view(payment) };
  }

  /** An instant as Mercado Pago writes it for Brazil: local time, milliseconds and the -03:00 offset. */
  function brasilia(at: Date): string {
    return `${new Date(at.getTime() - 3 * 3_600_000).toISOString().slice(0, 23)}-03:00`;
  }

  function view(p: DoublePayment & { owner?: string }): Plain<PaymentResponse> {
    const { owner: _owner, ...rest } = p;
    return JSON.parse(JSON.stringify(rest)) as Plain<PaymentResponse>;
  }

  function withPayment(id: string, account: Account, f: (p: DoublePayment & { owner: string }) => Stored): Stored {
    const p = payments.get(Number(id));
    if (!p || p.owner !== account.access_token) return { status: 404, body: errorBody(404, 'not_found', `Payment not found`) };
    return f(p);
  }

  function updatePayment(p: DoublePayment, b: Record<string, unknown>): Stored {
    const currency = p.currency_id!;
    if (b.capture === true) {
      if (p.status !== 'authorized') return { status: 400, body: errorBody(400, 'bad_request', `cannot capture a payment in status ${p.status}`) };
      const amount = b.transaction_amount === undefined ? p.transaction_amount! : b.transaction_amount;
      if (typeof amount !== 'number' || !(amount > 0) || amount > p.transaction_amount!) return { status: 400, body: errorBody(400, 'bad_request', 'transaction_amount exceeds the authorized amount') };
      // A partial capture releases the rest: the payment's amount becomes what was captured.
      Object.assign(p, { status: 'approved', status_detail: 'accredited', captured: true, transaction_amount: round(amount, currency), date_approved: now(), date_last_updated: now() });
      return { status: 200, body: view(p) };
    }
    if (b.status === 'cancelled') {
      if (p.status !== 'authorized' && p.status !== 'in_process' && p.status !== 'pending') return { status: 400, body: errorBody(400, 'bad_request', `cannot cancel a payment in status ${p.status}`) };
      Object.assign(p, { status: 'cancelled', status_detail: 'by_collector', captured: false, date_last_updated: now() });
      return { status: 200, body: view(p) };
    }
    return { status: 400, body: errorBody(400, 'bad_request', 'unsupported update') };
  }

  function refund(p: DoublePayment, b: Record<string, unknown>, behaviour: Behaviour | null): Stored {
    const currency = p.currency_id!;
    if (p.status !== 'approved') return { status: 400, body: errorBody(400, 'bad_request', `cannot refund a payment in status ${p.status}`) };
    const refunded = p.refunds.filter((r) => r.status !== 'rejected' && r.status !== 'cancelled').reduce((s, r) => s + (r.amount ?? 0), 0);
    const remaining = round(p.transaction_amount! - refunded, currency);
    const amount = b.amount === undefined ? remaining : b.amount;
    if (typeof amount !== 'number' || !(amount > 0) || amount > remaining) return { status: 400, body: errorBody(400, 'bad_request', 'amount exceeds the refundable amount') };
    const r: Plain<RefundResponse> = {
      id: nextRefund++,
      payment_id: p.id,
      amount,
      metadata: {},
      source: { id: String(p.collector_id), name: 'collector', type: 'collector' },
      date_created: now(),
      unique_sequence_number: undefined,
      refund_mode: 'standard',
      adjustment_amount: 0,
      status: behaviour?.asyncRefunds ? 'in_process' : 'approved',
      reason: undefined,
      amount_refunded_to_payer: amount,
    };
    p.refunds.push(r);
    recount(p);
    return { status: 201, body: JSON.parse(JSON.stringify(r)) as unknown };
  }

  function recount(p: DoublePayment): void {
    const currency = p.currency_id!;
    const counted = round(p.refunds.filter((r) => r.status === 'approved' || r.status === 'in_process').reduce((s, r) => s + (r.amount ?? 0), 0), currency);
    p.transaction_amount_refunded = counted;
    if (counted >= p.transaction_amount! && p.status === 'approved') Object.assign(p, { status: 'refunded', status_detail: 'refunded' });
    if (counted < p.transaction_amount! && p.status === 'refunded') Object.assign(p, { status: 'approved', status_detail: 'partially_refunded' });
    else if (counted > 0 && p.status === 'approved') p.status_detail = 'partially_refunded';
    p.date_last_updated = now();
  }

  function search(url: URL, account: Account): Stored {
    const ref = url.searchParams.get('external_reference');
    const results = [...payments.values()]
      .filter((p) => p.owner === account.access_token && (ref === null || p.external_reference === ref) && (searchableFrom.get(p.id) ?? 0) <= Date.now())
      .reverse();
    const answer: PaymentSearch = {
      paging: { total: results.length, limit: 30, offset: 0 },
      results: results.slice(0, 30).map((p) => ({ ...(view(p) as object), id: String(p.id) })) as PaymentSearch['results'],
    };
    return { status: 200, body: answer };
  }

  function withChargeback(id: string, account: Account, f: (cb: DoubleChargeback & { owner: string }) => Stored): Stored {
    const cb = chargebacks.get(id);
    if (!cb || cb.owner !== account.access_token) return { status: 404, body: errorBody(404, 'not_found', 'Chargeback not found') };
    return f(cb);
  }

  function viewChargeback(cb: DoubleChargeback & { owner?: string }): DoubleChargeback {
    const { owner: _owner, ...rest } = cb;
    return JSON.parse(JSON.stringify(rest)) as DoubleChargeback;
  }

  function receiveDocumentation(cb: DoubleChargeback, b: Record<string, unknown>): Stored {
    const files = (b as { files?: { name: string; type: string; sha256: string; size: number }[] }).files ?? [];
    if (files.length === 0) return { status: 400, body: errorBody(400, 'bad_request', 'no files') };
    // Documentation is taken while the chargeback asks for it and its deadline has not passed (Mercado Pago's
    // guide); a closed case takes none. A 400, as Mercado Pago refuses a request (the wording is the double's).
    const deadline = cb.date_documentation_deadline ? Date.parse(String(cb.date_documentation_deadline)) : Number.NaN;
    if (cb.status === 'closed' || cb.documentation_required !== true || !(deadline > Date.now())) {
      return { status: 400, body: errorBody(400, 'bad_request', 'The chargeback does not take documentation') };
    }
    documents.set(cb.id, [...(documents.get(cb.id) ?? []), ...files]);
    Object.assign(cb, { documentation_status: 'review_pending', date_last_updated: now() });
    return { status: 200, body: {} };
  }

  // A provider's edge keeps idle connections open far longer than our client does (fetch drops them after
  // the few seconds the Keep-Alive hint allows): with Node's 5 s default, a loaded run could reuse a socket
  // the double was closing at that instant, a CONNECTION_CUT no real provider would cause.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const double: MercadoPagoDouble = {
    url: `http://127.0.0.1:${port}`,
    requests,
    account({ currency = 'BRL' } = {}) {
      const a: Account = {
        access_token: `TEST-${randomBytes(8).toString('hex')}-${randomBytes(16).toString('hex')}`,
        webhook_secret: randomBytes(32).toString('hex'),
        currency,
        collectorId: nextCollector++,
        behaviour: null,
      };
      accounts.set(a.access_token, a);
      return { access_token: a.access_token, webhook_secret: a.webhook_secret };
    },
    behave(accessToken, behaviour) {
      const a = accounts.get(accessToken);
      if (!a) throw new Error('no such account at the double');
      a.behaviour = behaviour;
    },
    payment: (id) => {
      const p = payments.get(Number(id));
      return p ? (view(p) as DoublePayment) : undefined;
    },
    paymentsFor: (ref) => [...payments.values()].filter((p) => p.external_reference === ref).map((p) => view(p) as DoublePayment),
    settlePending(id, outcome) {
      const p = payments.get(Number(id));
      if (!p || p.status !== 'pending') throw new Error(`no pending payment ${id} at the double`);
      const [status, detail] =
        outcome === 'approved' ? ['approved', 'accredited'] : outcome === 'rejected' ? ['rejected', 'rejected_by_bank'] : outcome === 'cancelled' ? ['cancelled', 'by_collector'] : ['cancelled', 'expired'];
      Object.assign(p, { status, status_detail: detail, date_last_updated: now(), ...(status === 'approved' ? { date_approved: now(), money_release_status: 'released' } : {}) });
    },
    settleRefund(refundId, status) {
      for (const p of payments.values()) {
        const r = p.refunds.find((x) => x.id === refundId);
        if (r) {
          r.status = status;
          recount(p);
          return;
        }
      }
      throw new Error(`no refund ${refundId}`);
    },
    openChargeback(paymentId, { reasonId = '4853', reason = 'Cardholder dispute' } = {}) {
      const p = payments.get(paymentId);
      if (!p) throw new Error(`no payment ${paymentId}`);
      const id = String(nextChargeback++);
      const cb: DoubleChargeback & { owner: string } = {
        owner: p.owner,
        id,
        payment_id: p.id,
        payments: [p.id],
        status: 'open',
        amount: p.transaction_amount!,
        currency_id: p.currency_id!,
        currency: p.currency_id!,
        reason_id: reasonId,
        reason,
        coverage_applied: false,
        coverage_elegible: true,
        documentation_required: true,
        documentation_status: 'pending',
        date_documentation_deadline: new Date(Date.now() + 10 * 86_400_000).toISOString(),
        date_created: now(),
        last_modified: now(),
      } satisfies ChargebackResponse & MercadoPagoChargeback & { owner: string };
      chargebacks.set(id, cb);
      Object.assign(p, { status: 'charged_back', status_detail: 'in_process' });
      return viewChargeback(cb);
    },
    decideChargeback(id, outcome) {
      const cb = chargebacks.get(id);
      if (!cb) throw new Error(`no chargeback ${id}`);
      Object.assign(cb, outcome === 'WON' ? { coverage_applied: true, documentation_status: 'valid', status: 'closed' } : { coverage_applied: false, documentation_status: 'invalid', status: 'closed' });
    },
    documentation: (id) => documents.get(id) ?? [],
    signedNotification(kind, id, options = {}) {
      const owner = kind === 'chargeback' ? chargebacks.get(String(id))?.owner : payments.get(Number(id))?.owner;
      const secret = options.secret ?? (owner ? accounts.get(owner)?.webhook_secret : undefined);
      if (!secret) throw new Error(`the double has no ${kind} ${id} (give options.secret)`);
      const notificationId = options.notificationId ?? Number(BigInt(`0x${randomBytes(5).toString('hex')}`));
      const userId = owner ? accounts.get(owner)!.collectorId : 0;
      const dataId = String(id);
      // Written by hand so an 18-digit chargeback id stays a JSON number, as Mercado Pago sends it.
      const body =
        kind === 'chargeback'
          ? `{"actions":["changed_case_status"],"api_version":"v1","application_id":9007201037432480,"data":{"checkout":"API","date_updated":${JSON.stringify(now())},"id":${dataId},"payment_id":${chargebacks.get(dataId)?.payment_id ?? 0},"site_id":"MLB"},"date_created":${JSON.stringify(now())},"id":${notificationId},"live_mode":false,"type":"topic_chargebacks_wh","user_id":${userId},"version":1}`
          : JSON.stringify({
              action: kind === 'payment' ? 'payment.updated' : 'merchant_order.updated',
              api_version: 'v1',
              data: { id: dataId },
              date_created: now(),
              id: notificationId,
              live_mode: false,
              type: kind === 'payment' ? 'payment' : 'topic_merchant_order_wh',
              user_id: String(userId),
            });
      const ts = String(options.ts ?? Math.floor(Date.now() / 1000));
      const requestId = options.requestId ?? randomUUID();
      const v1 = createHmac('sha256', secret).update(`id:${dataId.toLowerCase()};request-id:${requestId};ts:${ts};`).digest('hex');
      return { body, headers: { 'content-type': 'application/json', 'x-signature': `ts=${ts},v1=${v1}`, 'x-request-id': requestId } };
    },
    async close() {
      for (const res of held) res.destroy();
      held.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return double;
}
