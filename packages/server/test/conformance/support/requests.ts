/**
 * Whole requests for the fuzz suite, from an operation's spec: valid ones (path, query and header
 * parameters, body), schema violations of each (with the JSON path the 400 must name), and
 * request-level mistakes (content type, credentials, signature, idempotency key, malformed JSON).
 */
import fc from 'fast-check';
import { arbitraryFor, mutations, pointerOf, type Hint, type JsonPath, type MutationKind } from './arbitraries.js';
import { findUnstorable } from '../../../src/http/storable-strings.js';
import { PDF_BASE64 } from './fixtures.js';
import type { Req } from './exchange.js';
import { validatorFor, type Schema, type SpecOperation, type SpecParam } from './spec-model.js';

/** Ids of real resources the generator mixes in, so requests get past "not found" into the handlers. */
export interface FuzzHints {
  accountId: string;
  customerIds: string[];
  vaultedTokens: string[];
  paymentIds: string[];
  chargebacks: { paymentId: string; transactionId: string }[];
  organizationIds: string[];
  webhookEndpointIds: string[];
  deliveries: { endpointId: string; deliveryId: string }[];
  /** Connections a provider notification may name (the sandbox's): another id is answered 401 like a bad signature. */
  notifiedConnectionIds: string[];
  /** A local receiver for webhook deliveries: the server must never be pointed at the internet. */
  receiverUrl: string;
}

export interface GenRequest {
  params: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: unknown;
}

/** A Yuno webhook's trigger rules: PURCHASE among the payment triggers (it has payorch events), CLOSE_TO_RENEWAL with renewal_days. */
function yunoTriggerRules(v: Record<string, unknown>): Record<string, unknown> {
  const payment = (v.payment_triggers as string[] | undefined) ?? [];
  const out: Record<string, unknown> = { ...v, payment_triggers: payment.includes('PURCHASE') ? payment : [...payment, 'PURCHASE'] };
  const subscription = (v.subscription_triggers as string[] | undefined) ?? [];
  if (v.renewal_days !== undefined && !subscription.includes('CLOSE_TO_RENEWAL')) out.subscription_triggers = [...subscription, 'CLOSE_TO_RENEWAL'];
  return out;
}

/**
 * Rules the spec states in prose, which a JSON Schema generator cannot know: generated values are
 * bent to follow them, so a 400 for a valid request really is a bug. Keep this list short; prefer
 * expressing a rule in the schema itself.
 */
export const FIXUPS: Record<string, (arb: fc.Arbitrary<unknown>) => fc.Arbitrary<unknown>> = {
  // CreatePaymentMethod: a card comes from exactly one of `vaulted_token`, a one-time `token` or
  // `detail.card.card_data` (400 otherwise), and its detail is `card` only; an asynchronous method takes no
  // card source and, of `detail`, only its own member: `bank_transfer` for PIX and BANK_TRANSFER, `card`
  // with `verify: false` (and `capture: true`) for APPLE_PAY, `wallet` (required) for GOOGLE_PAY.
  CreatePaymentMethod: (arb) =>
    arb.filter((v) => {
      const pm = v as { type?: string; vaulted_token?: unknown; token?: unknown; vault_on_success?: boolean; detail?: { card?: Record<string, unknown>; bank_transfer?: unknown; wallet?: unknown } };
      const detail = pm.detail ?? {};
      if (pm.type !== undefined && pm.type !== 'CARD') {
        if ('vaulted_token' in pm || 'token' in pm || pm.vault_on_success === true) return false;
        const own = ({ PIX: 'bank_transfer', BANK_TRANSFER: 'bank_transfer', APPLE_PAY: 'card', GOOGLE_PAY: 'wallet' } as Record<string, string>)[pm.type];
        if (Object.keys(detail).some((member) => member !== own)) return false;
        if (pm.type === 'GOOGLE_PAY' && detail.wallet === undefined) return false;
        const allowed: Record<string, unknown> = { verify: false, capture: true };
        return !(own === 'card' && detail.card && Object.entries(detail.card).some(([k, x]) => allowed[k] !== x));
      }
      if (detail.bank_transfer !== undefined || detail.wallet !== undefined) return false;
      const sources = ['vaulted_token' in pm, 'token' in pm, pm.detail?.card !== undefined && 'card_data' in pm.detail.card];
      return sources.filter(Boolean).length === 1;
    }),
  // CreatePaymentCustomerPayer: "paying with `vaulted_token` or `vault_on_success` needs an `id`";
  // CreatePaymentSplit: a share's amount "is in the payment's currency".
  CreatePaymentRequest: (arb) =>
    arb
      .filter((v) => {
        const { customer_payer: payer, payment_method: pm } = v as { customer_payer?: object; payment_method: { vault_on_success?: boolean } };
        return (payer !== undefined && 'id' in payer) || (!('vaulted_token' in pm) && pm.vault_on_success !== true);
      })
      .map((v) => {
        const body = v as { amount: { currency: string }; split_marketplace?: { amount?: { currency: string } }[] };
        if (!body.split_marketplace) return v;
        return { ...body, split_marketplace: body.split_marketplace.map((s) => (s.amount ? { ...s, amount: { ...s.amount, currency: body.amount.currency } } : s)) };
      }),
  // CreatePaymentAmount: "The server also rejects more decimals than the currency's ISO 4217 minor units
  // allow (400)", and currency is "ISO 4217 currency code" (the pattern alone admits any three letters).
  CreatePaymentAmount: (arb) =>
    fc.tuple(arb, fc.constantFrom('BRL', 'USD', 'EUR', 'MXN', 'COP', 'CLP', 'JPY', 'ARS', 'PEN', 'GBP')).map(([v, currency]) => ({
      ...(v as object),
      currency,
      // A string of digits (issue 24: Yuno's examples send one) is a whole amount already.
      value: typeof (v as { value: unknown }).value === 'string' ? (v as { value: string }).value : Math.max(1, Math.round((v as { value: number }).value)),
    })),
  // YunoWebhookCreateRequest: "At least one trigger must have a payorch event"; renewal_days "only with
  // `subscription_triggers` containing `CLOSE_TO_RENEWAL`".
  YunoWebhookCreateRequest: (arb) => arb.map((v) => yunoTriggerRules(v as Record<string, unknown>)),
  // YunoWebhookUpdateRequest: the same on the lists sent (the others stay as they were), and renewal_days
  // "not together with `clear_renewal_days`".
  YunoWebhookUpdateRequest: (arb) =>
    arb.map((v) => {
      const { clear_renewal_days: clear, ...rest } = v as Record<string, unknown>;
      const body = rest.renewal_days === undefined && clear !== undefined ? { ...rest, clear_renewal_days: clear } : rest;
      return body.enrollment_triggers !== undefined || body.payment_triggers !== undefined || body.renewal_days !== undefined ? yunoTriggerRules(body) : body;
    }),
  // EnrollPaymentMethodRequest: its description states the cross-field rules (one source for CARD, none
  // and optional bank details otherwise, verify only with card_data/token, absolute callback_url).
  EnrollPaymentMethodRequest: (arb) =>
    arb.map((raw) => {
      const v = { ...(raw as Record<string, unknown>) };
      const sources = ['card_data', 'token', 'provider_data'].filter((k) => k in v);
      if (v.type === 'CARD') {
        for (const extra of sources.slice(1)) delete v[extra];
        const pm = v.payment_method as { detail?: Record<string, unknown> } | undefined;
        if (pm?.detail) {
          const { bank_transfer: _dropped, ...detail } = pm.detail;
          v.payment_method = { ...pm, detail };
        }
        if (sources.length === 0) return undefined;
        if ('provider_data' in v) delete v.verify;
      } else {
        for (const k of sources) delete v[k];
        delete v.verify;
      }
      if (typeof v.callback_url === 'string' && !/^https?:\/\/[^\s/]+/i.test(v.callback_url)) v.callback_url = 'https://merchant.example/back';
      return v;
    }).filter((v) => v !== undefined),
};

/** Header parameters the transport sets (credentials, idempotency key, signatures), not the generator. */
const TRANSPORT_HEADERS = new Set(['x-idempotency-key', 'webhook-id', 'webhook-timestamp', 'webhook-signature']);

/**
 * Paging cursors are opaque values handed out by a previous page; a made-up one is answered 400 by
 * design (vault and webhooks alike), so generated requests leave them out. Paging itself is tested in
 * the domain suites.
 */
const CURSOR_PARAMS = new Set(['starting_after']);

const pick = <T>(values: T[]): fc.Arbitrary<T> | undefined => (values.length > 0 ? fc.constantFrom(...values) : undefined);

const offer = (arb: fc.Arbitrary<unknown> | undefined): Hint | undefined => (arb ? { arb } : undefined);

function bodyHint(hints: FuzzHints) {
  return (path: JsonPath): Hint | undefined => {
    const at = path.map((p) => (typeof p === 'number' ? '[]' : p)).join('.');
    if (at === 'account_id') return offer(fc.constant(hints.accountId));
    if (at === 'customer_payer.id') return offer(pick(hints.customerIds));
    if (at === 'payment_method.vaulted_token') return offer(pick(hints.vaultedTokens));
    if (at === 'data.payment_id') return offer(pick(hints.paymentIds));
    if (at === 'evidence.[].content') return offer(fc.constant(PDF_BASE64));
    // Webhook endpoints: the server will call this URL, so only the local receiver.
    if (at === 'url') return { arb: fc.stringMatching(/^[a-z0-9]{1,12}$/).map((p) => `${hints.receiverUrl}/${p}`), only: true };
    return undefined;
  };
}

function paramHint(name: string, hints: FuzzHints): fc.Arbitrary<unknown> | undefined {
  switch (name) {
    case 'webhook_endpoint_id':
      return pick([...hints.webhookEndpointIds, ...hints.deliveries.map((d) => d.endpointId)]);
    case 'delivery_id':
      return pick(hints.deliveries.map((d) => d.deliveryId));
    case 'customer_id':
      return pick(hints.customerIds);
    case 'payment_id':
      return pick([...hints.paymentIds, ...hints.chargebacks.map((c) => c.paymentId)]);
    case 'transaction_id':
      return pick(hints.chargebacks.map((c) => c.transactionId));
    case 'organization_id':
      // Never the sandbox organization: revokeApiKey must not be able to revoke the suite's own key.
      return pick(hints.organizationIds);
    case 'provider_id':
      return fc.constant('sandbox');
    default:
      return undefined;
  }
}

const asParamString = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

function paramArb(p: SpecParam, hints: FuzzHints): fc.Arbitrary<string> {
  const chars = p.in === 'header' ? 'header' : p.in === 'path' ? 'path' : 'any';
  const hinted = paramHint(p.name, hints);
  const arb = arbitraryFor(p.schema, { chars, hint: hinted ? () => ({ arb: hinted }) : undefined }).map(asParamString);
  // An empty query value is not a value (OpenAPI allowEmptyValue defaults to false).
  return p.in === 'query' ? arb.filter((v) => v !== '') : arb;
}

/** A valid request for the operation (by its schemas and the prose rules in FIXUPS). */
export function validRequest(op: SpecOperation, hints: FuzzHints): fc.Arbitrary<GenRequest> {
  const path = op.params.filter((p) => p.in === 'path');
  const query = op.params.filter((p) => p.in === 'query' && !CURSOR_PARAMS.has(p.name));
  const headers = op.params.filter((p) => p.in === 'header' && !TRANSPORT_HEADERS.has(p.name.toLowerCase()));
  const group = (ps: SpecParam[]) =>
    fc.record(Object.fromEntries(ps.map((p) => [p.name, paramArb(p, hints)])), { requiredKeys: ps.filter((p) => p.required).map((p) => p.name) }) as fc.Arbitrary<Record<string, string>>;

  let pathArb = group(path);
  // A payment and one of its own chargebacks, so dispute operations reach their state checks.
  if (path.some((p) => p.name === 'transaction_id') && hints.chargebacks.length > 0) {
    const pair = fc.constantFrom(...hints.chargebacks).map((c) => ({ payment_id: c.paymentId, transaction_id: c.transactionId }));
    pathArb = fc.oneof({ weight: 3, arbitrary: pair }, { weight: 1, arbitrary: pathArb });
  }
  if (path.some((p) => p.name === 'delivery_id') && hints.deliveries.length > 0) {
    const pair = fc.constantFrom(...hints.deliveries).map((d) => ({ webhook_endpoint_id: d.endpointId, delivery_id: d.deliveryId }));
    pathArb = fc.oneof({ weight: 3, arbitrary: pair }, { weight: 1, arbitrary: pathArb });
  }
  // A provider notification names a real connection (an unknown one is 401, as a bad signature is); the
  // merchant's own connection operations keep random ids (they must not PATCH the suite's connections).
  if (op.security === 'none' && path.some((p) => p.name === 'connection_id') && hints.notifiedConnectionIds.length > 0) {
    pathArb = fc.constantFrom(...hints.notifiedConnectionIds).map((id) => ({ connection_id: id }));
  }
  let bodyArb: fc.Arbitrary<unknown> = fc.constant(undefined);
  if (op.body) {
    const schema = op.body.schema;
    const validate = validatorFor(schema);
    const generated = arbitraryFor(schema, { hint: bodyHint(hints), fixups: FIXUPS }).filter((v) => validate(v) === true);
    bodyArb = op.body.required ? generated : fc.option(generated, { nil: undefined });
  }
  return fc.record({ params: pathArb, query: group(query), headers: group(headers), body: bodyArb });
}

/** Does the operation take any input the generator varies? (If not, one run says everything.) */
export const hasInputs = (op: SpecOperation): boolean => op.body !== undefined || op.params.some((p) => !TRANSPORT_HEADERS.has(p.name.toLowerCase()));

// ---------------------------------------------------------------------------------------------
// Invalid requests

export interface InvalidRequest {
  kind: MutationKind | 'unknown-query-parameter';
  /** Where the 400's errors[].path must point: '/body/amount/value', '/query/limit', ... */
  pointer: string;
  req: GenRequest;
}

const PARAM_KINDS = new Set<MutationKind>(['too-long', 'too-short', 'bad-format', 'bad-enum', 'out-of-range', 'wrong-type', 'unstorable-string']);
const LOCATION: Record<string, string> = { path: '/params', query: '/query', header: '/headers' };

/** The typed value a parameter string stands for (what the validator checks after coercion). */
function typed(p: SpecParam, value: string): unknown {
  const t = p.schema.type;
  if ((t === 'integer' || t === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (t === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

/** Every schema violation of a valid request, each as the request that carries it. */
export function invalidVariants(op: SpecOperation, r: GenRequest): InvalidRequest[] {
  const out: InvalidRequest[] = [];
  if (op.body && r.body !== undefined) {
    for (const m of mutations(op.body.schema, r.body)) {
      out.push({ kind: m.kind, pointer: pointerOf('/body', m.path), req: { ...r, body: m.apply(r.body) } });
    }
  }
  for (const p of op.params) {
    if (p.in === 'cookie' || TRANSPORT_HEADERS.has(p.name.toLowerCase())) continue;
    const bag = p.in === 'path' ? 'params' : p.in === 'query' ? 'query' : 'headers';
    const current = r[bag][p.name];
    if (current === undefined) continue;
    // Parameters travel percent-encoded, which has no form for an unpaired surrogate: NUL it is.
    for (const m of mutations(p.schema, typed(p, current), [], '\u0000')) {
      if (!PARAM_KINDS.has(m.kind)) continue;
      const value = m.apply(typed(p, current));
      const text = m.kind === 'wrong-type' ? (p.schema.type === 'string' ? undefined : 'a-string') : asParamString(value);
      // Path values must stay one non-dot segment; header values what fetch can send.
      if (text === undefined || text === '' || text === '.' || text === '..' || (p.in === 'header' && !/^[\x21-\x7e]*$/.test(text))) continue;
      if (m.kind !== 'unstorable-string' && validatorFor(p.schema)(typed(p, text)) === true) continue;
      const name = p.in === 'header' ? p.name.toLowerCase() : p.name;
      out.push({ kind: m.kind, pointer: `${LOCATION[p.in]}/${name}`, req: { ...r, [bag]: { ...r[bag], [p.name]: text } } });
    }
  }
  out.push({ kind: 'unknown-query-parameter', pointer: '/query/unexpected_param', req: { ...r, query: { ...r.query, unexpected_param: '1' } } });
  // A body variant counts if the schema refuses it, or it holds a string the database cannot store.
  return out.filter((v) => !v.pointer.startsWith('/body') || validatorFor(op.body!.schema as Schema)(v.req.body) !== true || findUnstorable(v.req.body, '/body') !== undefined);
}

/** A valid request broken in one place, chosen by the generator. */
export function invalidRequest(op: SpecOperation, hints: FuzzHints): fc.Arbitrary<InvalidRequest> {
  return fc.tuple(validRequest(op, hints), fc.nat()).map(([r, i]) => {
    const variants = invalidVariants(op, r);
    return variants[i % variants.length]!;
  });
}

// ---------------------------------------------------------------------------------------------
// Request-level mistakes

export type RequestMistake =
  | 'wrong-content-type'
  | 'malformed-json'
  | 'no-credentials'
  | 'garbage-credentials'
  | 'bad-signature'
  | 'missing-idempotency-key'
  | 'bad-idempotency-key';

export interface MistakeCase {
  kind: RequestMistake;
  status: 400 | 401 | 415;
  /** The problem code, where the design fixes it. */
  code?: string;
  req: Req;
}

export function requestMistakes(op: SpecOperation): RequestMistake[] {
  const kinds: RequestMistake[] = [];
  if (op.body) kinds.push('wrong-content-type', 'malformed-json');
  if (op.security !== 'none') kinds.push('no-credentials', 'garbage-credentials');
  if (op.signed) kinds.push('bad-signature');
  if (op.idempotent) kinds.push(...(op.idempotencyKeyRequired ? (['missing-idempotency-key'] as const) : []), 'bad-idempotency-key');
  return kinds;
}

/** One request-level mistake on a valid request: its Req and the answer it must get. */
export function mistakeCase(op: SpecOperation, kind: RequestMistake, r: GenRequest, variant: number): MistakeCase {
  const base: Req = { params: r.params, query: r.query, headers: r.headers, body: r.body ?? (op.body ? {} : undefined) };
  const garbageCreds: Record<string, string> =
    op.security === 'admin'
      ? { 'admin-api-key': `wrong-${'k'.repeat(variant % 40)}` }
      : { 'public-api-key': `pk_garbage_${variant}`, 'private-secret-key': `sk_garbage_${variant}` };
  switch (kind) {
    case 'wrong-content-type': {
      const type = ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'text/json'][variant % 4]!;
      return { kind, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', req: { ...base, body: undefined, rawBody: JSON.stringify(base.body ?? {}), contentType: type } };
    }
    case 'malformed-json': {
      const raw = ['{"a":', '{', '[1,2', "{'single': 'quotes'}", '{"a":1}}'][variant % 5]!;
      return { kind, status: 400, code: 'INVALID_REQUEST', req: { ...base, body: undefined, rawBody: raw } };
    }
    case 'no-credentials':
      return { kind, status: 401, code: 'INVALID_CREDENTIALS', req: { ...base, auth: 'none' } };
    case 'garbage-credentials':
      return { kind, status: 401, code: 'INVALID_CREDENTIALS', req: { ...base, auth: garbageCreds } };
    case 'bad-signature':
      return {
        kind,
        status: 401,
        req: {
          ...base,
          // A provider that exists, so the signature is what gets checked.
          params: Object.fromEntries(Object.entries(base.params ?? {}).map(([k, v]) => [k, k === 'provider_id' ? 'sandbox' : v])),
          auth: {
            'webhook-id': `msg_garbage_${variant}`,
            'webhook-timestamp': String(Math.floor(Date.now() / 1000) - (variant % 2) * 3600),
            'webhook-signature': `v1,${Buffer.from(`garbage-${variant}`).toString('base64')}`,
          },
        },
      };
    case 'missing-idempotency-key':
      return { kind, status: 400, code: 'INVALID_REQUEST', req: { ...base, idempotencyKey: null } };
    case 'bad-idempotency-key': {
      const key = ['', 'k'.repeat(256), 'tab\there', 'naïve-key'][variant % 4]!;
      return { kind, status: 400, code: 'INVALID_REQUEST', req: { ...base, idempotencyKey: null, headers: { ...base.headers, 'x-idempotency-key': key } } };
    }
  }
}
