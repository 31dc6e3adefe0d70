/**
 * The card vault's rules (docs/design.md §5): enrolling a payment method for a customer, listing them, the
 * sandbox provider's hosted enrollment page, and — for payments — opening a vaulted card.
 *
 * Enrollment checks everything and asks the provider (verify, or a redirect page) before it writes
 * anything, then writes the method in one short transaction that also binds the idempotency record
 * (deferred idempotency, dispatch.ts): no transaction is held across a provider call. The PAN exists in
 * clear only in memory, for validation, fingerprinting, sealing and the provider's verify call; the
 * security code is passed to the verify call and dropped.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { AppDeps } from '../context.js';
import { customersRepository } from '../customers/repository.js';
import type { Queryable } from '../db/database.js';
import { describeFieldErrors, problem, type FieldError, type ProblemReply } from '../http/problems.js';
import type { Logger } from '../platform/logger.js';
import { ProviderUnavailableError, type PaymentProvider, type ProviderCard, type ProviderCardInfo, type ProviderResult } from '../providers/provider.js';
import { accountBelongsTo } from '../tenancy/accounts.js';
import { isExpired, validateCard, type ValidatedCard } from './card-validation.js';
import { recordEnrollmentOutcome } from './events.js';
import { effectiveStatus, toApiPaymentMethod, type MaskedDetails } from './mapper.js';
import type { Sealed } from '../keyring/cipher.js';
import { paymentMethodKeysRepository as keysRepo, paymentMethodsRepository as repo, type DataKeyColumns, type NewPaymentMethodRow, type PaymentMethodRow } from './repository.js';
import type { VaultService } from './services.js';
import { pageOf } from '../http/paging.js';

type EnrollRequest = Schemas['EnrollPaymentMethodRequest'];
type EnrolledPaymentMethod = Schemas['EnrolledPaymentMethod'];

export type EnrollProblem = ProblemReply<
  | 'INVALID_REQUEST'
  | 'PCI_CERTIFICATION_REQUIRED'
  | 'INVALID_ACCOUNT_ID'
  | 'CUSTOMER_NOT_FOUND'
  | 'PAYMENT_METHOD_NOT_FOUND'
  | 'INVALID_STATUS'
  | 'INVALID_CARD'
  | 'PAYMENT_METHOD_TYPE_NOT_SUPPORTED'
  | 'PROVIDER_UNAVAILABLE'
  | 'NO_ROUTE'
>;

export interface VaultContext {
  db: Queryable;
  vault: VaultService;
  /** What verifies cards and hosts non-card enrollment: none outside sandbox mode (no sandbox provider exists there). */
  provider: PaymentProvider | undefined;
  organizationId: string;
  pciCertified: boolean;
  /** Public origin of the service (redirect pages and icons are addressed from it). */
  baseUrl: string;
  log: Logger;
  now?: Date;
  /**
   * Binds the enrollment's idempotency record to the method, in the transaction that inserts it (deferred
   * idempotency: the provider's verify runs before, outside any transaction). Absent for vault_on_success.
   */
  bind?: (tx: Queryable, resource: string) => Promise<void>;
  /**
   * Stores the enrollment's 201 reply as the idempotency record's, in the same transaction: a reply stored
   * after the commit would escape a shred that ran in between (its customer deleted, the method unenrolled)
   * and replay the card data. Absent for vault_on_success (the payment's reply is its own).
   */
  complete?: (tx: Queryable, reply: { status: number; body: unknown }) => Promise<void>;
}

/** The idempotency resource an enrollment is bound to: the method's vaulted token. */
export const enrollmentResource = (vaultedToken: string) => `payment_method:${vaultedToken}`;

/**
 * The one write of an enrollment, in one short transaction: the method, its event when it has one, and
 * the idempotency record's binding. Everything before it (checks, the provider's verify or redirect page)
 * held no transaction, so the customer looked up then may have been deleted since: it is locked for share
 * here and must still live (a deletion that committed meanwhile: 404, nothing vaulted; one that comes
 * after waits for this write and shreds the method with the rest).
 */
async function persist(
  ctx: VaultContext,
  row: NewPaymentMethodRow,
  /** `now` of the enrollment (its reply's); `announce`: its event is recorded (enrolled or declined). */
  at: { now: Date; announce: boolean },
  dataKey?: Sealed,
): Promise<{ ok: true; method: EnrolledPaymentMethod } | { ok: false; problem: EnrollProblem }> {
  return ctx.db.transaction(async (tx) => {
    if (!(await customersRepository.lockLive(tx, row.organization_id, row.customer_id))) {
      return { ok: false as const, problem: customerNotFound(row.customer_id) };
    }
    const saved = await repo.insert(tx, row);
    // The method's own data key (wrapped by the keyring), which unenrolling destroys.
    if (dataKey) await keysRepo.replace(tx, saved.id, saved.organization_id, dataKey);
    if (at.announce) await recordEnrollmentOutcome(tx, saved, ctx.baseUrl, at.now);
    await ctx.bind?.(tx, enrollmentResource(saved.vaulted_token));
    // The method the request answers with, stored as its reply with the write.
    const method = toApiPaymentMethod(saved, ctx.baseUrl, at.now);
    await ctx.complete?.(tx, { status: 201, body: method });
    return { ok: true as const, method };
  });
}

const customerNotFound = (customerId: string) => problem('CUSTOMER_NOT_FOUND', `No customer with id ${customerId}.`);

/** The currency of a verify transaction when the request names none: the enrollment country's. */
const COUNTRY_CURRENCY: Readonly<Record<string, string>> = {
  AR: 'ARS', BO: 'BOB', BR: 'BRL', CL: 'CLP', CO: 'COP', CR: 'CRC', EC: 'USD', SV: 'USD', GT: 'GTQ', HN: 'HNL',
  MX: 'MXN', NI: 'NIO', PA: 'USD', PY: 'PYG', PE: 'PEN', US: 'USD', UY: 'UYU',
};

const CATEGORY_OF_TYPE: Readonly<Record<string, string>> = {
  CARD: 'CARD',
  ACH_ENROLLMENT: 'BANK_TRANSFER',
  WALLET_PAY_ENROLLMENT: 'WALLET',
};

const invalid = (errors: FieldError[]): EnrollProblem =>
  problem('INVALID_REQUEST', describeFieldErrors(errors), { errors });

/** Business rules of the request that the schema cannot say (400 INVALID_REQUEST, each naming its field). */
function requestErrors(body: EnrollRequest): FieldError[] {
  const errors: FieldError[] = [];
  const isCard = body.type === 'CARD';
  const sources = (['card_data', 'token', 'provider_data'] as const).filter((k) => body[k] !== undefined);
  if (isCard && sources.length === 0) {
    errors.push({ path: '/body/card_data', message: 'is required for a CARD enrollment (or a token, or provider_data)' });
  }
  if (sources.length > 1) {
    for (const extra of sources.slice(1)) {
      errors.push({ path: `/body/${extra}`, message: `cannot be combined with ${sources[0]}; send one source of the payment method` });
    }
  }
  if (!isCard && body.card_data !== undefined) {
    errors.push({ path: '/body/card_data', message: `is only for type CARD, not ${body.type}` });
  }
  if (isCard && body.payment_method?.detail?.bank_transfer !== undefined) {
    errors.push({ path: '/body/payment_method/detail/bank_transfer', message: 'is only for non-card enrollments' });
  }
  // A provider token is taken as verified by its provider (Yuno's token migration sends verify with it):
  // accepted, and no verify transaction runs.
  if (body.verify !== undefined && !isCard) {
    errors.push({ path: '/body/verify', message: 'is available for CARD enrollments' });
  }
  if (body.callback_url !== undefined && !/^https?:\/\/[^\s/]+/i.test(body.callback_url)) {
    errors.push({ path: '/body/callback_url', message: 'must be an absolute http or https URL' });
  }
  return errors;
}

/** What a card enrollment vaults: a validated card from the request, or one copied from a token. */
interface CardToVault {
  card: ValidatedCard;
  securityCode: string | null;
  /** Carried over from the source record of a token enrollment (issuer facts are per card). */
  issuer?: Pick<PaymentMethodRow, 'card_issuer' | 'card_issuer_name' | 'card_issuer_code' | 'card_country_code' | 'card_category' | 'card_funding_type'>;
}

async function cardFromToken(ctx: VaultContext, token: string, type: string): Promise<CardToVault | EnrollProblem> {
  const source = await repo.findWithPan(ctx.db, ctx.organizationId, token);
  if (!source || source.type !== type) {
    return problem('PAYMENT_METHOD_NOT_FOUND', `No ${type} payment method with token ${token}.`, {
      errors: [{ path: '/body/token', message: 'does not identify a payment method of this organization' }],
    });
  }
  const status = effectiveStatus(source, ctx.now ?? new Date());
  if (status !== 'ENROLLED' || !source.pan_ciphertext || !source.pan_iv || !source.pan_tag || !source.pan_key_id) {
    return problem('INVALID_STATUS', `The payment method ${token} is ${status}; only an ENROLLED card can be enrolled again from its token.`, {
      errors: [{ path: '/body/token', message: `refers to a ${status} payment method` }],
    });
  }
  const pan = ctx.vault.openPan(
    ctx.organizationId,
    source.id,
    source.vaulted_token,
    { ciphertext: source.pan_ciphertext, iv: source.pan_iv, tag: source.pan_tag, keyId: source.pan_key_id },
    dataKeyOf(source),
  );
  return {
    card: {
      pan,
      brand: source.card_brand!,
      iin: source.card_iin!,
      lfd: source.card_lfd!,
      numberLength: source.card_number_length!,
      securityCodeLength: source.card_security_code_length ?? 3,
      expirationMonth: source.card_expiration_month!,
      expirationYear: source.card_expiration_year!,
      holderName: source.card_holder_name,
    },
    securityCode: null,
    issuer: source,
  };
}

/** The wrapped data key joined to a method, or null (none, or destroyed). */
function dataKeyOf(row: DataKeyColumns): { ciphertext: Uint8Array; iv: Uint8Array; tag: Uint8Array; keyId: string } | null {
  if (!row.data_key_ciphertext || !row.data_key_iv || !row.data_key_tag || !row.data_key_key_id) return null;
  return { ciphertext: row.data_key_ciphertext, iv: row.data_key_iv, tag: row.data_key_tag, keyId: row.data_key_key_id };
}

function providerCard(c: CardToVault): ProviderCard {
  return {
    number: c.card.pan,
    holderName: c.card.holderName,
    expirationMonth: c.card.expirationMonth,
    expirationYear: c.card.expirationYear,
    securityCode: c.securityCode,
    brand: c.card.brand,
  };
}

/** Maps a verify outcome to the method's status. A method whose verification failed is not vaulted. */
function statusAfterVerify(result: ProviderResult | undefined): { status: 'ENROLLED' | 'DECLINED' | 'ERROR'; subStatus: string | null } {
  if (!result || result.outcome === 'SUCCEEDED') return { status: 'ENROLLED', subStatus: null };
  return { status: result.outcome === 'DECLINED' ? 'DECLINED' : 'ERROR', subStatus: result.responseCode };
}

/**
 * The verification as EnrolledVerify.payment shows it. Recorded in the method's `verify` column, not as a
 * payment row: it moves no money, so GET /v1/payments/{id} does not know its id (docs: yuno-compatibility).
 */
function verificationPayment(result: ProviderResult, providerId: string, currency: string | null, now: Date): Schemas['EnrolledVerifyPayment'] {
  return {
    id: randomUUID(),
    status: result.outcome,
    sub_status: result.outcome === 'SUCCEEDED' ? 'VERIFIED' : result.outcome,
    amount: { currency, value: 0 },
    response_code: result.responseCode,
    response_message: result.responseMessage,
    provider_data: { id: providerId, transaction_id: result.providerTransactionId },
    created_at: now.toISOString(),
  };
}

function maskBankTransfer(detail: NonNullable<NonNullable<EnrollRequest['payment_method']>['detail']>['bank_transfer']): MaskedDetails | null {
  if (!detail) return null;
  return {
    bank_name: detail.bank_name ?? null,
    account_type: detail.account_type ?? null,
    bank_account_last4: detail.bank_account ? detail.bank_account.replace(/\s/g, '').slice(-4) : null,
    beneficiary_name: detail.beneficiary_name ?? null,
  };
}

export async function enrollPaymentMethod(
  ctx: VaultContext,
  customerId: string,
  idempotencyKey: string | null,
  body: EnrollRequest,
  /** BIN data a provider already reported for this card (vault_on_success passes the payment's). */
  knownCardInfo?: ProviderCardInfo,
): Promise<
  | { ok: true; method: EnrolledPaymentMethod }
  /** `unanswered`: the provider did not answer the verify; nothing was written, the request may run again. */
  | { ok: false; problem: EnrollProblem; unanswered?: true }
> {
  const fail = (p: EnrollProblem) => ({ ok: false as const, problem: p });
  const errors = requestErrors(body);
  if (errors.length > 0) return fail(invalid(errors));

  if (body.card_data !== undefined && !ctx.pciCertified) {
    return fail(
      problem('PCI_CERTIFICATION_REQUIRED', 'Enrolling a card with raw card data requires a PCI certified organization; enroll with a token instead.', {
        errors: [{ path: '/body/card_data', message: 'raw card data is only accepted from PCI certified organizations' }],
      }),
    );
  }
  if (!(await accountBelongsTo(ctx.db, body.account_id, ctx.organizationId))) {
    return fail(
      problem('INVALID_ACCOUNT_ID', `The account ${body.account_id} is not an account of this organization.`, {
        errors: [{ path: '/body/account_id', message: 'is not an account of this organization' }],
      }),
    );
  }
  if (!(await customersRepository.find(ctx.db, ctx.organizationId, customerId))) return fail(customerNotFound(customerId));

  const now = ctx.now ?? new Date();
  const id = randomUUID();
  const vaultedToken = randomUUID();
  const base: NewPaymentMethodRow = {
    id,
    vaulted_token: vaultedToken,
    organization_id: ctx.organizationId,
    customer_id: customerId,
    account_id: body.account_id,
    idempotency_key: idempotencyKey,
    type: body.type,
    category: CATEGORY_OF_TYPE[body.type] ?? body.type,
    country: body.country,
    status: 'ENROLLED',
    sub_status: null,
    workflow: body.workflow ?? 'DIRECT',
    callback_url: body.callback_url ?? null,
    action: null,
    redirect_url: null,
    parent_type: body.parent_type ?? null,
    token: body.token ?? null,
    customer_payer: body.customer_payer ?? null,
    recurring_payment: body.recurring_payment ?? null,
    provider_data: null,
    details: null,
    details_ciphertext: null,
    details_iv: null,
    details_tag: null,
    details_key_id: null,
    card_brand: null,
    card_iin: null,
    card_lfd: null,
    card_number_length: null,
    card_security_code_length: null,
    card_expiration_month: null,
    card_expiration_year: null,
    card_holder_name: null,
    card_issuer: null,
    card_issuer_name: null,
    card_issuer_code: null,
    card_country_code: null,
    card_category: null,
    card_funding_type: null,
    pan_ciphertext: null,
    pan_iv: null,
    pan_tag: null,
    pan_key_id: null,
    fingerprint: null,
    verify: null,
    verify_provider_id: null,
    verify_provider_transaction_id: null,
  };

  // A provider token (migration): kept sealed; the vault holds no card number for it.
  if (body.provider_data !== undefined) {
    const sealed = ctx.vault.sealMethod(ctx.organizationId, id, vaultedToken, { details: { provider_data: body.provider_data } });
    const saved = await persist(
      ctx,
      {
        ...base,
        // Stored under our column names; the request uses Yuno's (`id` is the provider).
        provider_data: { provider_id: body.provider_data.id, token_source: body.provider_data.token_source },
        details: { provider_id: body.provider_data.id, token_source: body.provider_data.token_source } satisfies MaskedDetails,
        details_ciphertext: sealed.details!.ciphertext,
        details_iv: sealed.details!.iv,
        details_tag: sealed.details!.tag,
        details_key_id: sealed.details!.keyId,
      },
      { now, announce: true },
      sealed.dataKey,
    );
    return saved.ok ? { ok: true, method: saved.method } : fail(saved.problem);
  }

  if (body.type !== 'CARD') {
    // The customer approves on the provider's page (in sandbox mode the sandbox provider's, sandbox-pages.ts).
    if (!ctx.provider?.startRedirectEnrollment) {
      return fail(
        problem('PAYMENT_METHOD_TYPE_NOT_SUPPORTED', `No payment provider of this service can enroll ${body.type} payment methods; only CARD can be enrolled.`, {
          errors: [{ path: '/body/type', message: `${body.type} is not supported by the configured provider` }],
        }),
      );
    }
    const { redirectUrl } = await ctx.provider.startRedirectEnrollment({ vaultedToken, type: body.type, country: body.country, baseUrl: ctx.baseUrl });
    const bank = body.payment_method?.detail?.bank_transfer;
    const sealed = bank ? ctx.vault.sealMethod(ctx.organizationId, id, vaultedToken, { details: { bank_transfer: bank } }) : undefined;
    const saved = await persist(ctx, {
      ...base,
      status: 'READY_TO_ENROLL',
      action: 'REDIRECT_URL',
      redirect_url: redirectUrl,
      details: maskBankTransfer(bank),
      details_ciphertext: sealed?.details?.ciphertext ?? null,
      details_iv: sealed?.details?.iv ?? null,
      details_tag: sealed?.details?.tag ?? null,
      details_key_id: sealed?.details?.keyId ?? null,
    }, { now, announce: false }, sealed?.dataKey);
    return saved.ok ? { ok: true, method: saved.method } : fail(saved.problem);
  }

  let toVault: CardToVault;
  if (body.card_data !== undefined) {
    const check = validateCard(body.card_data, now);
    if (!check.ok) {
      return fail(
        problem('INVALID_CARD', `The card was not accepted: ${check.errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`, {
          errors: check.errors,
        }),
      );
    }
    toVault = { card: check.card, securityCode: body.card_data.security_code ?? null };
  } else {
    const fromToken = await cardFromToken(ctx, body.token!, body.type);
    if ('status' in fromToken) return fail(fromToken);
    toVault = fromToken;
  }

  let verification: ProviderResult | undefined;
  let verifiedBy: string | null = null;
  const verifyCurrency = body.verify ? (body.verify.currency ?? COUNTRY_CURRENCY[body.country] ?? null) : null;
  if (body.verify) {
    // No provider can verify a card here (outside sandbox mode the sandbox ones do not exist): refused, nothing stored.
    if (!ctx.provider) {
      return fail(
        problem('NO_ROUTE', 'No payment provider of this service can verify a card; nothing was enrolled. Enroll it without verify.', {
          errors: [{ path: '/body/verify', message: 'cannot be honoured: no provider of this service verifies cards' }],
        }),
      );
    }
    const provider = ctx.provider;
    verifiedBy = provider.id;
    try {
      verification = await provider.verify({ card: providerCard(toVault), currency: verifyCurrency, reference: vaultedToken });
    } catch (err) {
      if (!(err instanceof ProviderUnavailableError)) throw err;
      ctx.log.warn({ vaultedToken, provider: provider.id, kind: err.kind }, 'enrollment verify unanswered');
      // A verification moves no money: nothing to settle later, nothing written; the request may simply run again.
      return {
        ok: false,
        unanswered: true,
        problem: problem('PROVIDER_UNAVAILABLE', `The provider ${provider.id} did not answer the card's verification (${err.kind}); nothing was enrolled. Send the request again.`, {
          headers: { 'Retry-After': '5' },
        }),
      };
    }
    ctx.log.info(
      { vaultedToken, provider: provider.id, outcome: verification.outcome, responseCode: verification.responseCode },
      'enrollment verify answered',
    );
  }
  const { status, subStatus } = statusAfterVerify(verification);
  const card = toVault.card;
  const info = verification?.cardInfo ?? knownCardInfo;
  // Data minimization: only a usable (ENROLLED) method keeps its PAN.
  const sealed = status === 'ENROLLED' ? ctx.vault.sealMethod(ctx.organizationId, id, vaultedToken, { pan: card.pan }) : undefined;
  const saved = await persist(ctx, {
    ...base,
    status,
    sub_status: subStatus,
    card_brand: card.brand,
    card_iin: card.iin,
    card_lfd: card.lfd,
    card_number_length: card.numberLength,
    card_security_code_length: card.securityCodeLength,
    card_expiration_month: card.expirationMonth,
    card_expiration_year: card.expirationYear,
    card_holder_name: card.holderName,
    // Issuer facts: carried over from a token's source record, else what the verifying provider reported
    // (BIN data, as payments record it); unknown (null) when no verification ran.
    card_issuer: toVault.issuer?.card_issuer ?? null,
    card_issuer_name: toVault.issuer?.card_issuer_name ?? info?.issuerName ?? null,
    card_issuer_code: toVault.issuer?.card_issuer_code ?? info?.issuerCode ?? null,
    card_country_code: toVault.issuer?.card_country_code ?? info?.countryCode ?? null,
    card_category: toVault.issuer?.card_category ?? info?.category ?? null,
    card_funding_type: toVault.issuer?.card_funding_type ?? info?.type ?? null,
    pan_ciphertext: sealed?.pan?.ciphertext ?? null,
    pan_iv: sealed?.pan?.iv ?? null,
    pan_tag: sealed?.pan?.tag ?? null,
    pan_key_id: sealed?.pan?.keyId ?? null,
    fingerprint: ctx.vault.fingerprint(ctx.organizationId, card.pan),
    verify: body.verify
      ? {
          vault_on_success: body.verify.vault_on_success ?? false,
          currency: verifyCurrency,
          payment: verification ? verificationPayment(verification, verifiedBy!, verifyCurrency, now) : null,
        }
      : null,
    verify_provider_id: verification ? verifiedBy : null,
    verify_provider_transaction_id: verification?.providerTransactionId ?? null,
  }, { now, announce: true }, sealed?.dataKey);
  return saved.ok ? { ok: true, method: saved.method } : fail(saved.problem);
}

/** PaymentMethodList.payment_methods maxItems: the most an unpaged list answers. */
const UNPAGED_MAX = 1000;

export type ListProblem = ProblemReply<'INVALID_REQUEST' | 'CUSTOMER_NOT_FOUND'>;

/** A customer's methods, newest first; paged only when `limit` or `starting_after` is given. */
export async function listPaymentMethods(
  db: Queryable,
  organizationId: string,
  customerId: string,
  page: { limit?: number; startingAfter?: string },
  baseUrl: string,
  now: Date = new Date(),
): Promise<{ ok: true; list: Schemas['PaymentMethodList'] } | { ok: false; problem: ListProblem }> {
  if (!(await customersRepository.find(db, organizationId, customerId))) {
    return { ok: false, problem: problem('CUSTOMER_NOT_FOUND', `No customer with id ${customerId}.`) };
  }
  const paged = page.limit !== undefined || page.startingAfter !== undefined;
  if (!paged) {
    // Every method, up to the list's maxItems; past it the first page and the cursor for the rest.
    const rows = await repo.listByCustomer(db, organizationId, customerId, { limit: UNPAGED_MAX + 1 });
    if (rows.length <= UNPAGED_MAX) return { ok: true, list: { payment_methods: rows.map((r) => toApiPaymentMethod(r, baseUrl, now)) } };
    const items = rows.slice(0, UNPAGED_MAX);
    return { ok: true, list: { payment_methods: items.map((r) => toApiPaymentMethod(r, baseUrl, now)), has_more: true, next_cursor: items[items.length - 1]!.vaulted_token } };
  }
  if (page.startingAfter !== undefined && !(await repo.existsForCustomer(db, organizationId, customerId, page.startingAfter))) {
    const errors = [{ path: '/query/starting_after', message: "is not a vaulted_token of this customer's payment methods" }];
    return { ok: false, problem: problem('INVALID_REQUEST', 'starting_after does not identify a payment method of this customer.', { errors }) };
  }
  const limit = page.limit ?? 10;
  const rows = await repo.listByCustomer(db, organizationId, customerId, {
    limit: limit + 1,
    ...(page.startingAfter !== undefined ? { after: page.startingAfter } : {}),
  });
  const { items, ...paging } = pageOf(rows, limit, (r) => r.vaulted_token);
  return { ok: true, list: { payment_methods: items.map((r) => toApiPaymentMethod(r, baseUrl, now)), ...paging } };
}

// ---- The sandbox provider's hosted enrollment page (non-card methods) ----

export type HostedEnrollment = PaymentMethodRow & { organization_name: string };

export async function findHostedEnrollment(db: Queryable, vaultedToken: string): Promise<HostedEnrollment | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(vaultedToken)) return undefined;
  const row = await repo.findForHostedPage(db, vaultedToken);
  return row && row.type !== 'CARD' ? row : undefined;
}

export type HostedDecision = 'approve' | 'decline';

/**
 * The customer's answer on the provider page: READY_TO_ENROLL becomes ENROLLED or DECLINED, once.
 * Submitting the same answer again (a reload) is harmless; the opposite answer afterwards is refused.
 */
export async function completeHostedEnrollment(
  db: Queryable,
  vaultedToken: string,
  decision: HostedDecision,
  baseUrl: string,
): Promise<{ kind: 'not-found' } | { kind: 'completed' | 'repeated'; row: PaymentMethodRow } | { kind: 'conflict'; row: PaymentMethodRow }> {
  const target = decision === 'approve' ? 'ENROLLED' : 'DECLINED';
  return db.transaction(async (tx) => {
    const updated = await repo.completeRedirectEnrollment(tx, vaultedToken, target, decision === 'decline' ? 'DECLINED_BY_CUSTOMER' : null);
    if (updated) {
      await recordEnrollmentOutcome(tx, updated, baseUrl, new Date());
      return { kind: 'completed' as const, row: updated };
    }
    const current = await findHostedEnrollment(tx, vaultedToken);
    if (!current) return { kind: 'not-found' as const };
    return current.status === target ? { kind: 'repeated' as const, row: current } : { kind: 'conflict' as const, row: current };
  });
}

// ---- For payments: a vaulted card at payment time ----

/** An enrolled card as payments need it: identity, masked data (as a payment shows it) and ownership. */
export interface VaultedCardMethod {
  id: string;
  vaultedToken: string;
  organizationId: string;
  customerId: string;
  accountId: string;
  type: string;
  status: string;
  /** The payment's `card_data` (Schemas['PaymentCardData']): masked, never the PAN. */
  cardData: Schemas['PaymentCardData'];
}

/**
 * Loads an organization's ENROLLED, unexpired card by vaulted_token and opens it for one provider call.
 * Call it inside the payment's transaction (`db` = ctx.db). Undefined when the token is unknown, of
 * another organization, not a card, not ENROLLED, expired, or holds no PAN (provider-token methods).
 * The returned ProviderCard has no security code: the vault never has one.
 */
export async function loadCardForPayment(
  db: Queryable,
  deps: Pick<AppDeps, 'services'>,
  organizationId: string,
  vaultedToken: string,
  now: Date = new Date(),
): Promise<{ method: VaultedCardMethod; card: ProviderCard } | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(vaultedToken)) return undefined;
  // Locked for share in the payment's transaction: an unenroll (or its customer's deletion) either came first
  // (UNENROLLED: not found) or waits for the payment's row and then redacts it.
  const row = await repo.findWithPan(db, organizationId, vaultedToken, { forShare: true });
  if (!row || row.type !== 'CARD' || row.status !== 'ENROLLED') return undefined;
  if (!row.pan_ciphertext || !row.pan_iv || !row.pan_tag || !row.pan_key_id) return undefined;
  if (row.card_expiration_month === null || row.card_expiration_year === null) return undefined;
  if (isExpired(row.card_expiration_month, row.card_expiration_year, now)) return undefined;
  const pan = deps.services.vault.openPan(
    organizationId,
    row.id,
    row.vaulted_token,
    { ciphertext: row.pan_ciphertext, iv: row.pan_iv, tag: row.pan_tag, keyId: row.pan_key_id },
    dataKeyOf(row),
  );
  return {
    method: {
      id: row.id,
      vaultedToken: row.vaulted_token,
      organizationId: row.organization_id,
      customerId: row.customer_id,
      accountId: row.account_id,
      type: row.type,
      status: row.status,
      cardData: {
        holder_name: row.card_holder_name,
        iin: row.card_iin!,
        lfd: row.card_lfd!,
        number_length: row.card_number_length!,
        security_code_length: row.card_security_code_length ?? 0,
        brand: row.card_brand!,
        issuer_name: row.card_issuer_name,
        issuer_code: row.card_issuer_code,
        country_code: row.card_country_code,
        category: row.card_category,
        type: row.card_funding_type,
        fingerprint: row.fingerprint,
        expiration_month: row.card_expiration_month,
        expiration_year: row.card_expiration_year,
      },
    },
    card: {
      number: pan,
      holderName: row.card_holder_name,
      expirationMonth: row.card_expiration_month,
      expirationYear: row.card_expiration_year,
      securityCode: null,
      brand: row.card_brand!,
    },
  };
}

/**
 * Records a payment with the method: `succeeded` true sets last_successfully_used = true and
 * last_successfully_used_at = at; false sets last_successfully_used = false and keeps the last success
 * time. Returns false when no method has this token, or it was unenrolled (or its customer deleted) since the
 * payment loaded it: an unenrolled method's last-used fields are not written.
 */
export async function markUsed(db: Queryable, vaultedToken: string, at: Date | string, succeeded = true): Promise<boolean> {
  return repo.markUsed(db, vaultedToken, at, succeeded);
}

/**
 * Deferred idempotency's recoverer for resources 'payment_method:<token>' (enrollPaymentMethod): the
 * enrolled method as the request answers it (201), built from the database when the request's own reply
 * was never stored. An enrollment is settled once its one write committed, so this never waits.
 */
export function enrollmentRecoverer(baseUrl: () => string) {
  return async (db: Queryable, target: { organizationId: string; id: string }): Promise<{ status: number; body: EnrolledPaymentMethod } | null> => {
    const row = await repo.findWithPan(db, target.organizationId, target.id);
    return row ? { status: 201, body: toApiPaymentMethod(row, baseUrl()) } : null;
  };
}
