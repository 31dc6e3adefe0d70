/**
 * enrollPaymentMethod and listPaymentMethods contract tests against a real server and database (PGlite,
 * and PostgreSQL when DATABASE_URL is set): every status each operation documents and can produce,
 * the vault's rules (docs/interface-spec.md §4.2, §4.3, §2.7; docs/design.md §5), idempotency and concurrency.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../src/db/postgres.js';
import { loadCardForPayment, markUsed } from '../src/vault/service.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer } from './support/harness.js';
import {
  AMEX,
  cardBody,
  createCustomer,
  enroll,
  enrollOk,
  FUTURE_YY,
  MASTERCARD_OK,
  VISA_INSUFFICIENT_FUNDS,
  VISA_OK,
  VISA_PROVIDER_ERROR,
} from './support/vault-fixtures.js';
import { inject } from 'vitest';

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const ALL_FIELDS = [
  'idempotency_key', 'name', 'description', 'icon', 'type', 'category', 'country', 'status', 'sub_status', 'vaulted_token',
  'callback_url', 'action', 'redirect_url', 'parent_type', 'created_at', 'updated_at', 'card_data', 'last_successfully_used',
  'last_successfully_used_at', 'preferred', 'verify',
].sort();

/** Bad requests the schema or the business rules reject with 400, each naming its field. */
function badRequests(accountId: string): { name: string; body: unknown; field: string }[] {
  const card = cardBody(accountId);
  return [
    { name: 'missing account_id', body: { ...card, account_id: undefined }, field: '/body/account_id' },
    { name: 'account_id under 36 chars', body: { ...card, account_id: 'acc-123' }, field: '/body/account_id' },
    { name: 'account_id over 64 chars', body: { ...card, account_id: 'a'.repeat(65) }, field: '/body/account_id' },
    { name: 'missing country', body: { ...card, country: undefined }, field: '/body/country' },
    { name: 'country outside the 17 allowed', body: { ...card, country: 'DE' }, field: '/body/country' },
    { name: 'missing type', body: { ...card, type: undefined }, field: '/body/type' },
    { name: 'unknown type', body: { ...card, type: 'BANK_TRANSFER' }, field: '/body/type' },
    { name: 'workflow other than DIRECT', body: { ...card, workflow: 'SDK_CHECKOUT' }, field: '/body/workflow' },
    { name: 'callback_url under 3 chars', body: { ...card, callback_url: 'ab' }, field: '/body/callback_url' },
    { name: 'callback_url over 255 chars', body: { ...card, callback_url: `https://x.example/${'a'.repeat(250)}` }, field: '/body/callback_url' },
    { name: 'callback_url not http(s)', body: { ...card, callback_url: 'javascript:alert(1)' }, field: '/body/callback_url' },
    { name: 'token not a UUID', body: { ...card, card_data: undefined, token: 'not-a-uuid' }, field: '/body/token' },
    { name: 'three-digit expiration_year (two or four digits are taken)', body: cardBody(accountId, { expiration_year: 100 + FUTURE_YY }), field: '/body/card_data/expiration_year' },
    { name: 'expiration_month 13', body: cardBody(accountId, { expiration_month: 13 }), field: '/body/card_data/expiration_month' },
    { name: 'expiration_month 0', body: cardBody(accountId, { expiration_month: 0 }), field: '/body/card_data/expiration_month' },
    { name: 'number with spaces', body: cardBody(accountId, { number: '4507 9900 0000 0002' }), field: '/body/card_data/number' },
    { name: 'number too short', body: cardBody(accountId, { number: '45079900000' }), field: '/body/card_data/number' },
    { name: 'security_code of 5 digits', body: cardBody(accountId, { security_code: '12345' }), field: '/body/card_data/security_code' },
    { name: 'card_data without number', body: { ...card, card_data: { expiration_month: 12, expiration_year: FUTURE_YY } }, field: '/body/card_data/number' },
    { name: 'unknown card_data field', body: cardBody(accountId, { cvv: '123' } as never), field: '/body/card_data/cvv' },
    { name: 'verify currency lower case', body: { ...card, verify: { vault_on_success: true, currency: 'brl' } }, field: '/body/verify/currency' },
    { name: 'verify unknown field', body: { ...card, verify: { amount: 0 } }, field: '/body/verify/amount' },
    { name: 'unknown top-level field', body: { ...card, vault: true }, field: '/body/vault' },
    { name: 'CARD without card_data, token or provider_data', body: { ...card, card_data: undefined }, field: '/body/card_data' },
    { name: 'card_data and token together', body: { ...card, token: randomUUID() }, field: '/body/token' },
    { name: 'card_data on an ACH enrollment', body: { ...card, type: 'ACH_ENROLLMENT' }, field: '/body/card_data' },
    {
      name: 'verify on an ACH enrollment',
      body: { account_id: accountId, country: 'US', type: 'ACH_ENROLLMENT', verify: { vault_on_success: true } },
      field: '/body/verify',
    },
    {
      name: 'bank_transfer on a CARD enrollment',
      body: { ...card, payment_method: { detail: { bank_transfer: { bank_account: '123456789' } } } },
      field: '/body/payment_method/detail/bank_transfer',
    },
    { name: 'provider_data without payment_method_token', body: { ...card, card_data: undefined, provider_data: { token_source: 'PROVIDER_API', id: 'x' } }, field: '/body/provider_data/payment_method_token' },
    { name: 'recurring_payment bad frequency', body: { ...card, recurring_payment: { frequency: 'HOURLY' } }, field: '/body/recurring_payment/frequency' },
  ];
}

/** Cards the vault must refuse with 422 INVALID_CARD, naming what failed. */
function invalidCards(): { name: string; card: Record<string, unknown>; field: string; message: RegExp }[] {
  const now = new Date();
  const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15));
  return [
    { name: 'Luhn failure', card: { number: '4507990000000003' }, field: '/body/card_data/number', message: /Luhn/ },
    { name: 'IIN of no brand', card: { number: '1000000000000008' }, field: '/body/card_data/number', message: /IIN/ },
    { name: 'length not valid for the brand (Visa, 17 digits)', card: { number: '45079900000000006' }, field: '/body/card_data/number', message: /digits/ },
    { name: 'brand given does not match', card: { brand: 'MASTERCARD' }, field: '/body/card_data/brand', message: /VISA/ },
    { name: 'Amex with a 3-digit security code', card: { number: AMEX, security_code: '123' }, field: '/body/card_data/security_code', message: /4 digits/ },
    { name: 'Visa with a 4-digit security code', card: { security_code: '1234' }, field: '/body/card_data/security_code', message: /3 digits/ },
    {
      name: 'expired last month',
      card: { expiration_month: lastMonth.getUTCMonth() + 1, expiration_year: lastMonth.getUTCFullYear() % 100 },
      field: '/body/card_data/expiration_year',
      message: /expired/,
    },
    { name: 'expired years ago', card: { expiration_month: 1, expiration_year: 20 }, field: '/body/card_data/expiration_year', message: /expired/ },
    {
      name: 'expiry absurdly far ahead',
      card: { expiration_year: (now.getUTCFullYear() + 30) % 100 },
      field: '/body/card_data/expiration_year',
      message: /ahead/,
    },
  ];
}

for (const backend of backends()) {
  describe(`card vault on ${backend}`, () => {
    const t = useServer(backend);
    const account = () => t.sandbox.account_id;
    const countMethods = async (customerId: string) =>
      (await t.db.query('SELECT 1 FROM payment_methods WHERE customer_id = $1', [customerId])).length;

    describe('enrollPaymentMethod', () => {
      it('201: vaults a card after a successful verify, with every field of §2.7 and masked card data only', async () => {
        const customerId = await createCustomer(t);
        const key = randomUUID();
        const body = cardBody(account(), { brand: 'VISA' }, { verify: { vault_on_success: true, currency: 'BRL' } });
        const res = await enroll(t, customerId, body, { key });
        const text = await res.text();
        expect(res.status, text).toBe(201);
        expect(text).not.toContain(VISA_OK);
        expect(text).not.toMatch(/security_code"|"number"/);
        const m = JSON.parse(text) as Schemas['EnrolledPaymentMethod'];
        expectSchema('EnrolledPaymentMethod', m);
        expect(Object.keys(m).sort()).toEqual(ALL_FIELDS);
        expect(m).toMatchObject({
          idempotency_key: key,
          name: 'VISA ****0002',
          type: 'CARD',
          category: 'CARD',
          country: 'BR',
          status: 'ENROLLED',
          sub_status: null,
          callback_url: null,
          action: null,
          redirect_url: null,
          parent_type: null,
          last_successfully_used: null,
          last_successfully_used_at: null,
          preferred: null,
          verify: {
            vault_on_success: true,
            currency: 'BRL',
            payment: {
              status: 'SUCCEEDED',
              sub_status: 'VERIFIED',
              amount: { currency: 'BRL', value: 0 },
              response_code: 'SUCCEEDED',
              provider_data: { id: 'SANDBOX_A' },
            },
          },
          card_data: {
            iin: '45079900',
            lfd: '0002',
            holder_name: 'JOAO SILVA',
            expiration_month: 12,
            expiration_year: FUTURE_YY,
            number_length: 16,
            security_code_length: 3,
            brand: 'VISA',
            // Issuer facts from the BIN data the verifying provider reported, as payments record them.
            issuer: null,
            issuer_name: 'Sandbox Bank',
            issuer_code: null,
            country_code: 'BR',
            category: 'CLASSIC',
            type: 'CREDIT',
          },
        });
        expect(m.verify!.payment!.id).toMatch(UUID);
        expect(m.verify!.payment!.provider_data!.transaction_id).toMatch(/^sbx_txn_/);
        expect(m.verify!.payment!.created_at).not.toBeNull();
        // The verification is recorded on the method, not as a payment: no payment has its id.
        await expectProblem(await t.fetch(`/payments/${m.verify!.payment!.id}`), 404, 'PAYMENT_NOT_FOUND');
        // GET answers the same shape.
        const got = (await (await t.fetch(`/customers/${customerId}/payment-methods/${m.vaulted_token}`)).json()) as Schemas['EnrolledPaymentMethod'];
        expect(got.verify).toEqual(m.verify);
        expect(got.card_data).toEqual(m.card_data);
        expect(m.description).toMatch(/^Visa card ending in 0002, expires 12\/20\d\d$/);
        expect(m.vaulted_token).toMatch(UUID);
        expect(m.card_data!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
        expect(m.created_at).toMatch(ISO_MICROS);
        expect(m.updated_at).toMatch(ISO_MICROS);
        expect(m.icon).toBe(`${t.running.url}/v1/assets/brands/visa.svg`);
      });

      it('201: the icon address resolves to an SVG a merchant page may embed', async () => {
        const customerId = await createCustomer(t);
        const m = await enrollOk(t, customerId, cardBody(account(), { number: MASTERCARD_OK }));
        const res = await fetch(m.icon!);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
        expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
        expect(await res.text()).toMatch(/^<svg [^>]*aria-label="Mastercard"/);
        await expectProblem(await fetch(`${t.baseUrl}/assets/brands/nope.svg`), 404, 'NOT_FOUND');
      });

      it('201: a 15-digit Amex shows a 6-digit IIN and a 4-digit security code length', async () => {
        const customerId = await createCustomer(t);
        const m = await enrollOk(t, customerId, cardBody(account(), { number: AMEX, security_code: '1234', brand: 'American Express' }));
        expect(m.card_data).toMatchObject({ iin: '378282', lfd: '0005', number_length: 15, security_code_length: 4, brand: 'AMEX' });
        expect(m.name).toBe('AMEX ****0005');
      });

      it('201: without verify and without a security code the card is vaulted; verify is null', async () => {
        const customerId = await createCustomer(t);
        const body = cardBody(account());
        delete (body.card_data as { security_code?: string }).security_code;
        const m = await enrollOk(t, customerId, body);
        expect(m.status).toBe('ENROLLED');
        expect(m.verify).toBeNull();
        // No provider answered, so nothing is known about the issuer.
        expect(m.card_data).toMatchObject({ holder_name: 'JOAO SILVA', issuer_name: null, country_code: null, category: null, type: null });
      });

      it('201: verify without a currency uses the country currency', async () => {
        const customerId = await createCustomer(t);
        const m = await enrollOk(t, customerId, { ...cardBody(account()), country: 'MX', verify: {} });
        expect(m.verify).toMatchObject({ vault_on_success: false, currency: 'MXN', payment: { status: 'SUCCEEDED', amount: { currency: 'MXN', value: 0 } } });
      });

      it('201: the same card again is a new record with a new vaulted_token and the same fingerprint', async () => {
        const customerId = await createCustomer(t);
        const a = await enrollOk(t, customerId, cardBody(account()));
        const b = await enrollOk(t, customerId, cardBody(account(), { holder_name: 'J SILVA' }));
        expect(b.vaulted_token).not.toBe(a.vaulted_token);
        expect(b.card_data!.fingerprint).toBe(a.card_data!.fingerprint);
        const other = await enrollOk(t, customerId, cardBody(account(), { number: MASTERCARD_OK }));
        expect(other.card_data!.fingerprint).not.toBe(a.card_data!.fingerprint);
        expect(await countMethods(customerId)).toBe(3);
      });

      it('201: the same card has a different fingerprint in another organization', async () => {
        const mine = await enrollOk(t, await createCustomer(t), cardBody(account()));
        const org = await t.createOrganization({ pciCertified: true });
        const theirCustomer = await createCustomer(t, org);
        const res = await enroll(t, theirCustomer, cardBody(org.account_id), {
          headers: { 'public-api-key': org.public_api_key, 'private-secret-key': org.private_secret_key },
        });
        expect(res.status).toBe(201);
        const theirs = (await res.json()) as Schemas['EnrolledPaymentMethod'];
        expect(theirs.card_data!.fingerprint).not.toBe(mine.card_data!.fingerprint);
      });

      it('201 DECLINED (not a 5xx) when the verify is declined; the PAN of a declined card is not kept', async () => {
        const customerId = await createCustomer(t);
        const m = await enrollOk(t, customerId, cardBody(account(), { number: VISA_INSUFFICIENT_FUNDS }, { verify: { vault_on_success: true, currency: 'BRL' } }));
        expectSchema('EnrolledPaymentMethod', m);
        expect(m).toMatchObject({
          status: 'DECLINED',
          sub_status: 'INSUFFICIENT_FUNDS',
          verify: { vault_on_success: true, currency: 'BRL', payment: { status: 'DECLINED', sub_status: 'DECLINED', response_code: 'INSUFFICIENT_FUNDS' } },
          card_data: { lfd: '0010', brand: 'VISA' },
        });
        const rows = await t.db.query<{ pan_ciphertext: unknown; fingerprint: string }>('SELECT pan_ciphertext, fingerprint FROM payment_methods WHERE vaulted_token = $1', [m.vaulted_token]);
        expect(rows[0]!.pan_ciphertext).toBeNull();
        expect(rows[0]!.fingerprint).toBe(m.card_data!.fingerprint);
      });

      it('a verify recorded before 2.0.0 (flat status and codes) is answered in the new shape', async () => {
        const customerId = await createCustomer(t);
        const m = await enrollOk(t, customerId, cardBody(account(), {}, { verify: { vault_on_success: true, currency: 'BRL' } }));
        const legacy = { vault_on_success: true, currency: 'BRL', status: 'SUCCEEDED', response_code: 'SUCCEEDED', response_message: 'Transaction successful' };
        await t.db.query('UPDATE payment_methods SET verify = $1::jsonb WHERE vaulted_token = $2', [JSON.stringify(legacy), m.vaulted_token]);
        const got = (await (await t.fetch(`/customers/${customerId}/payment-methods/${m.vaulted_token}`)).json()) as Schemas['EnrolledPaymentMethod'];
        expectSchema('EnrolledPaymentMethod', got);
        expect(got.verify).toEqual({
          vault_on_success: true,
          currency: 'BRL',
          payment: {
            id: null,
            status: 'SUCCEEDED',
            sub_status: 'VERIFIED',
            amount: { currency: 'BRL', value: 0 },
            response_code: 'SUCCEEDED',
            response_message: 'Transaction successful',
            provider_data: m.verify!.payment!.provider_data,
            created_at: null,
          },
        });
      });

      it('201 ERROR when the provider fails the verify', async () => {
        const customerId = await createCustomer(t);
        const m = await enrollOk(t, customerId, cardBody(account(), { number: VISA_PROVIDER_ERROR }, { verify: { currency: 'BRL' } }));
        expect(m).toMatchObject({ status: 'ERROR', sub_status: 'PROVIDER_ERROR', verify: { payment: { status: 'ERROR', response_code: 'PROVIDER_ERROR' } } });
      });

      it('201: an ACH enrollment is READY_TO_ENROLL with REDIRECT_URL to a page that exists', async () => {
        const customerId = await createCustomer(t);
        const m = await enrollOk(t, customerId, {
          account_id: account(),
          country: 'US',
          type: 'ACH_ENROLLMENT',
          workflow: 'DIRECT',
          callback_url: 'https://shop.example.com/checkout/ach-enrolled',
          payment_method: { detail: { bank_transfer: { bank_name: 'First Bank', account_type: 'CHECKING', bank_account: '000123456789', beneficiary_name: 'Ann Lee' } } },
        });
        expectSchema('EnrolledPaymentMethod', m);
        expect(m).toMatchObject({
          type: 'ACH_ENROLLMENT',
          category: 'BANK_TRANSFER',
          status: 'READY_TO_ENROLL',
          action: 'REDIRECT_URL',
          callback_url: 'https://shop.example.com/checkout/ach-enrolled',
          card_data: null,
          name: 'ACH ****6789',
        });
        expect(m.redirect_url).toBe(`${t.running.url}/v1/sandbox/enrollments/${m.vaulted_token}`);
        const page = await fetch(m.redirect_url!);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        const html = await page.text();
        expect(html).toContain('****6789');
        expect(html).not.toContain('000123456789');
        const stored = await t.db.query<{ text: string }>('SELECT row_to_json(p)::text AS text FROM payment_methods p WHERE vaulted_token = $1', [m.vaulted_token]);
        expect(stored[0]!.text).not.toContain('000123456789');
      });

      it('201: a wallet enrollment is READY_TO_ENROLL too', async () => {
        const customerId = await createCustomer(t);
        const m = await enrollOk(t, customerId, { account_id: account(), country: 'CO', type: 'WALLET_PAY_ENROLLMENT' });
        expect(m).toMatchObject({ type: 'WALLET_PAY_ENROLLMENT', status: 'READY_TO_ENROLL', action: 'REDIRECT_URL', card_data: null });
        expect((await fetch(m.icon!)).status).toBe(200);
      });

      it('201: a token of an enrolled card enrolls it again (no raw card data, so no PCI certification needed)', async () => {
        const first = await enrollOk(t, await createCustomer(t), cardBody(account()));
        const customerId = await createCustomer(t);
        const m = await enrollOk(t, customerId, { account_id: account(), country: 'BR', type: 'CARD', token: first.vaulted_token, parent_type: 'CARD', verify: { currency: 'BRL' } });
        expect(m).toMatchObject({ status: 'ENROLLED', parent_type: 'CARD', card_data: { lfd: '0002', iin: '45079900', fingerprint: first.card_data!.fingerprint }, verify: { payment: { status: 'SUCCEEDED' } } });
        expect(m.vaulted_token).not.toBe(first.vaulted_token);
        const opened = await loadCardForPayment(t.db, t.running.deps, t.sandbox.organization_id, m.vaulted_token!);
        expect(opened?.card.number).toBe(VISA_OK);
      });

      it('201: provider_data enrolls a provider token; the vault holds no card number for it', async () => {
        const customerId = await createCustomer(t);
        const m = await enrollOk(t, customerId, {
          account_id: account(),
          country: 'BR',
          type: 'CARD',
          provider_data: { token_source: 'MIGRATION_FILE', id: 'ADYEN', payment_method_token: 'tok_8fj3k2l1', connection_id: 'conn-adyen-1' },
        });
        expect(m).toMatchObject({ status: 'ENROLLED', card_data: null, name: 'CARD (ADYEN token)' });
        const rows = await t.db.query<{ text: string }>('SELECT row_to_json(p)::text AS text FROM payment_methods p WHERE vaulted_token = $1', [m.vaulted_token]);
        expect(rows[0]!.text).not.toContain('tok_8fj3k2l1');
        expect(await loadCardForPayment(t.db, t.running.deps, t.sandbox.organization_id, m.vaulted_token!)).toBeUndefined();
      });

      it.each(badRequests('9c1f6a3e-5b2d-4e8f-a7c4-3d2b1e0f9a86'))('400 names the field: $name', async ({ body, field }) => {
        const customerId = await createCustomer(t);
        const fixed = JSON.parse(JSON.stringify(body).replaceAll('9c1f6a3e-5b2d-4e8f-a7c4-3d2b1e0f9a86', account())) as unknown;
        const problem = await expectProblem(await enroll(t, customerId, fixed), 400, 'INVALID_REQUEST');
        expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain(field);
        expect(await countMethods(customerId)).toBe(0);
      });

      it('400: the X-Idempotency-Key header is required', async () => {
        const customerId = await createCustomer(t);
        const problem = await expectProblem(await enroll(t, customerId, cardBody(account()), { key: null }), 400, 'INVALID_REQUEST');
        expect(JSON.stringify(problem.errors)).toMatch(/x-idempotency-key/i);
      });

      it('400: malformed JSON', async () => {
        const customerId = await createCustomer(t);
        const res = await t.fetch(`/customers/${customerId}/payment-methods`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
          body: '{"account_id": ',
        });
        await expectProblem(res, 400, 'INVALID_REQUEST');
      });

      it('401: no credentials or a wrong secret', async () => {
        const customerId = await createCustomer(t);
        const body = JSON.stringify(cardBody(account()));
        const headers = { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() };
        await expectProblem(await t.fetch(`/customers/${customerId}/payment-methods`, { method: 'POST', headers, body, credentials_: false }), 401, 'INVALID_CREDENTIALS');
        await expectProblem(
          await t.fetch(`/customers/${customerId}/payment-methods`, { method: 'POST', headers: { ...headers, 'private-secret-key': 'sk_wrong' }, body }),
          401,
          'INVALID_CREDENTIALS',
        );
        expect(await countMethods(customerId)).toBe(0);
      });

      it('403 PCI_CERTIFICATION_REQUIRED: raw card data from an organization that is not PCI certified', async () => {
        const org = await t.createOrganization({ pciCertified: false });
        const customerId = await createCustomer(t, org);
        const res = await enroll(t, customerId, cardBody(org.account_id), {
          headers: { 'public-api-key': org.public_api_key, 'private-secret-key': org.private_secret_key },
        });
        const problem = await expectProblem(res, 403, 'PCI_CERTIFICATION_REQUIRED');
        expect(JSON.stringify(problem)).not.toContain(VISA_OK);
        expect(await countMethods(customerId)).toBe(0);
        // The same organization may still start a non-card enrollment.
        const ach = await enroll(t, customerId, { account_id: org.account_id, country: 'US', type: 'ACH_ENROLLMENT' }, {
          headers: { 'public-api-key': org.public_api_key, 'private-secret-key': org.private_secret_key },
        });
        expect(ach.status).toBe(201);
      });

      it('403 INVALID_ACCOUNT_ID: an account of another organization', async () => {
        const org = await t.createOrganization({ pciCertified: true });
        const customerId = await createCustomer(t);
        const problem = await expectProblem(await enroll(t, customerId, cardBody(org.account_id)), 403, 'INVALID_ACCOUNT_ID');
        expect((problem.errors as { path: string }[])[0]!.path).toBe('/body/account_id');
        expect(await countMethods(customerId)).toBe(0);
      });

      it('404 CUSTOMER_NOT_FOUND: unknown customer, and a customer of another organization', async () => {
        await expectProblem(await enroll(t, randomUUID(), cardBody(account())), 404, 'CUSTOMER_NOT_FOUND');
        const org = await t.createOrganization({ pciCertified: true });
        const theirs = await createCustomer(t, org);
        await expectProblem(await enroll(t, theirs, cardBody(account())), 404, 'CUSTOMER_NOT_FOUND');
        expect(await countMethods(theirs)).toBe(0);
      });

      it('404 PAYMENT_METHOD_NOT_FOUND: a token that is not a method of this organization', async () => {
        const org = await t.createOrganization({ pciCertified: true });
        const theirCustomer = await createCustomer(t, org);
        const res = await enroll(t, theirCustomer, cardBody(org.account_id), {
          headers: { 'public-api-key': org.public_api_key, 'private-secret-key': org.private_secret_key },
        });
        const theirCard = (await res.json()) as Schemas['EnrolledPaymentMethod'];
        const customerId = await createCustomer(t);
        for (const token of [randomUUID(), theirCard.vaulted_token!]) {
          const problem = await expectProblem(await enroll(t, customerId, { account_id: account(), country: 'BR', type: 'CARD', token }), 404, 'PAYMENT_METHOD_NOT_FOUND');
          expect((problem.errors as { path: string }[])[0]!.path).toBe('/body/token');
        }
      });

      it('409 INVALID_STATUS: a token of a declined card', async () => {
        const declined = await enrollOk(t, await createCustomer(t), cardBody(account(), { number: VISA_INSUFFICIENT_FUNDS }, { verify: { vault_on_success: true } }));
        const customerId = await createCustomer(t);
        await expectProblem(await enroll(t, customerId, { account_id: account(), country: 'BR', type: 'CARD', token: declined.vaulted_token }), 409, 'INVALID_STATUS');
      });

      it('409 REQUEST_IN_PROCESS: the same key while the first request still runs', async () => {
        const customerId = await createCustomer(t);
        const key = randomUUID();
        if (backend === 'pglite') {
          // One embedded connection serializes transactions: a duplicate waits and then replays, never 409.
          const [a, b] = await Promise.all([enroll(t, customerId, cardBody(account()), { key }), enroll(t, customerId, cardBody(account()), { key })]);
          expect([a.status, b.status]).toEqual([201, 201]);
          expect([a.headers.get('idempotent-replayed'), b.headers.get('idempotent-replayed')]).toContain('true');
          expect(await countMethods(customerId)).toBe(1);
          return;
        }
        // PostgreSQL: hold the request's idempotency lock from another session, as a running request would.
        const holder = await openPostgres(inject('postgresUrl')!, { max: 1 });
        try {
          await holder.transaction(async (tx) => {
            await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`idempotency:${t.sandbox.organization_id}:${key}`]);
            const res = await enroll(t, customerId, cardBody(account()), { key });
            await expectProblem(res, 409, 'REQUEST_IN_PROCESS');
            expect(res.headers.get('retry-after')).toBe('1');
          });
        } finally {
          await holder.close();
        }
        expect(await countMethods(customerId)).toBe(0);
        const after = await enroll(t, customerId, cardBody(account()), { key });
        expect(after.status).toBe(201);
      });

      it('413: a body over the route limit', async () => {
        const customerId = await createCustomer(t);
        const res = await enroll(t, customerId, cardBody(account(), { holder_name: 'x'.repeat(200_000) }));
        await expectProblem(res, 413, 'PAYLOAD_TOO_LARGE');
      });

      it('415: a body that is not JSON', async () => {
        const customerId = await createCustomer(t);
        const res = await t.fetch(`/customers/${customerId}/payment-methods`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain', 'x-idempotency-key': randomUUID() },
          body: 'number=4507990000000002',
        });
        await expectProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      });

      it.each(invalidCards())('422 INVALID_CARD names what failed: $name', async ({ card, field, message }) => {
        const customerId = await createCustomer(t);
        const res = await enroll(t, customerId, cardBody(account(), card));
        const text = await res.clone().text();
        const problem = await expectProblem(res, 422, 'INVALID_CARD');
        const error = (problem.errors as { path: string; message: string }[]).find((e) => e.path === field);
        expect(error, JSON.stringify(problem.errors)).toBeDefined();
        expect(error!.message).toMatch(message);
        expect(text).not.toContain(String(card.number ?? VISA_OK));
        expect(await countMethods(customerId)).toBe(0);
      });

      it('422 IDEMPOTENCY_KEY_REUSED: the same key with another body; the replay of the same body is identical', async () => {
        const customerId = await createCustomer(t);
        const key = randomUUID();
        const first = await enroll(t, customerId, cardBody(account()), { key });
        expect(first.status).toBe(201);
        const firstBody = await first.json();
        const replay = await enroll(t, customerId, cardBody(account()), { key });
        expect(replay.status).toBe(201);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(await replay.json()).toEqual(firstBody);
        await expectProblem(await enroll(t, customerId, cardBody(account(), { number: MASTERCARD_OK }), { key }), 422, 'IDEMPOTENCY_KEY_REUSED');
        expect(await countMethods(customerId)).toBe(1);
      });

      it('a stored 422 is replayed for the same key, and nothing was written', async () => {
        const customerId = await createCustomer(t);
        const key = randomUUID();
        const body = cardBody(account(), { number: '4507990000000003' });
        await expectProblem(await enroll(t, customerId, body, { key }), 422, 'INVALID_CARD');
        const again = await enroll(t, customerId, body, { key });
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        await expectProblem(again, 422, 'INVALID_CARD');
        expect(await countMethods(customerId)).toBe(0);
      });

      it('concurrency: 20 requests with one key at once make exactly one record', async () => {
        const customerId = await createCustomer(t);
        const key = randomUUID();
        const results = await Promise.all(Array.from({ length: 20 }, () => enroll(t, customerId, cardBody(account()), { key })));
        const statuses = results.map((r) => r.status);
        expect(statuses.every((s) => s === 201 || s === 409), statuses.join(',')).toBe(true);
        const created = await Promise.all(results.filter((r) => r.status === 201).map((r) => r.json() as Promise<Schemas['EnrolledPaymentMethod']>));
        expect(created.length).toBeGreaterThan(0);
        expect(new Set(created.map((c) => c.vaulted_token)).size).toBe(1);
        expect(results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
        expect(await countMethods(customerId)).toBe(1);
      });
    });

    describe('listPaymentMethods', () => {
      it('200: newest first, every field of §2.7, never a PAN; empty list for a customer without methods', async () => {
        const empty = await t.client.GET('/customers/{customer_id}/payment-methods', { params: { path: { customer_id: await createCustomer(t) } } });
        expect(empty.response.status).toBe(200);
        expect(empty.data).toEqual({ payment_methods: [] });

        const customerId = await createCustomer(t);
        const a = await enrollOk(t, customerId, cardBody(account()));
        const b = await enrollOk(t, customerId, cardBody(account(), { number: MASTERCARD_OK }));
        const c = await enrollOk(t, customerId, { account_id: account(), country: 'US', type: 'ACH_ENROLLMENT' });
        const res = await t.fetch(`/customers/${customerId}/payment-methods`);
        const text = await res.text();
        expect(res.status).toBe(200);
        expect(text).not.toContain(VISA_OK);
        expect(text).not.toContain(MASTERCARD_OK);
        const list = JSON.parse(text) as Schemas['PaymentMethodList'];
        expectSchema('PaymentMethodList', list);
        expect(Object.keys(list)).toEqual(['payment_methods']);
        expect(list.payment_methods.map((m) => m.vaulted_token)).toEqual([c.vaulted_token, b.vaulted_token, a.vaulted_token]);
        for (const m of list.payment_methods) expect(Object.keys(m).sort()).toEqual(ALL_FIELDS);
        expect(list.payment_methods[2]).toEqual(a);
        expect(list.payment_methods[1]!.icon).toMatch(/\/v1\/assets\/brands\/mastercard\.svg$/);
      });

      it('shows last_successfully_used(_at) once a payment used the method (markUsed)', async () => {
        const customerId = await createCustomer(t);
        const m = await enrollOk(t, customerId, cardBody(account()));
        expect(await markUsed(t.db, m.vaulted_token!, new Date('2026-01-02T03:04:05.123Z'))).toBe(true);
        const { data } = await t.client.GET('/customers/{customer_id}/payment-methods', { params: { path: { customer_id: customerId } } });
        expect(data!.payment_methods[0]).toMatchObject({ last_successfully_used: true, last_successfully_used_at: '2026-01-02T03:04:05.123000Z' });
        await markUsed(t.db, m.vaulted_token!, new Date(), false);
        const again = await t.client.GET('/customers/{customer_id}/payment-methods', { params: { path: { customer_id: customerId } } });
        expect(again.data!.payment_methods[0]).toMatchObject({ last_successfully_used: false, last_successfully_used_at: '2026-01-02T03:04:05.123000Z' });
      });

      it('cursor paging with limit and starting_after; the unpaged answer is unchanged', async () => {
        const customerId = await createCustomer(t);
        const tokens: string[] = [];
        for (let i = 0; i < 5; i++) tokens.unshift((await enrollOk(t, customerId, cardBody(account()))).vaulted_token!);
        const page = async (query: Record<string, string | number>) => {
          const { data, response } = await t.client.GET('/customers/{customer_id}/payment-methods', {
            params: { path: { customer_id: customerId }, query: query as never },
          });
          expect(response.status).toBe(200);
          expectSchema('PaymentMethodList', data);
          return data!;
        };
        const p1 = await page({ limit: 2 });
        expect(p1.payment_methods.map((m) => m.vaulted_token)).toEqual(tokens.slice(0, 2));
        expect(p1).toMatchObject({ has_more: true, next_cursor: tokens[1] });
        const p2 = await page({ limit: 2, starting_after: p1.next_cursor! });
        expect(p2.payment_methods.map((m) => m.vaulted_token)).toEqual(tokens.slice(2, 4));
        const p3 = await page({ limit: 2, starting_after: p2.next_cursor! });
        expect(p3.payment_methods.map((m) => m.vaulted_token)).toEqual(tokens.slice(4));
        expect(p3).toMatchObject({ has_more: false, next_cursor: null });
        const rest = await page({ starting_after: tokens[0]! });
        expect(rest.payment_methods).toHaveLength(4);
        expect((await page({ limit: 100 })).payment_methods).toHaveLength(5);
      });

      it('unpaged past the list maxItems (1,000): the first 1,000 with has_more and the cursor to the rest', async () => {
        const customerId = await createCustomer(t);
        const first = await enrollOk(t, customerId, cardBody(account()));
        // 1,004 older copies of the method, straight in the table (1,005 enrollments through the API would take minutes).
        await t.db.query(
          `INSERT INTO payment_methods
           SELECT (jsonb_populate_record(pm, jsonb_build_object('id', gen_random_uuid()::text, 'vaulted_token', gen_random_uuid()::text,
                   'idempotency_key', NULL, 'created_at', pm.created_at - g * interval '1 millisecond'))).*
             FROM payment_methods pm, generate_series(1, 1004) g WHERE pm.vaulted_token = $1`,
          [first.vaulted_token],
        );
        const { data, response } = await t.client.GET('/customers/{customer_id}/payment-methods', { params: { path: { customer_id: customerId } } });
        expect(response.status).toBe(200);
        expectSchema('PaymentMethodList', data);
        expect(data!.payment_methods).toHaveLength(1000);
        expect(data!.payment_methods[0]!.vaulted_token).toBe(first.vaulted_token);
        expect(data).toMatchObject({ has_more: true, next_cursor: data!.payment_methods[999]!.vaulted_token });
        const rest = await t.client.GET('/customers/{customer_id}/payment-methods', {
          params: { path: { customer_id: customerId }, query: { starting_after: data!.next_cursor! } },
        });
        expect(rest.data!.payment_methods).toHaveLength(5);
        expect(rest.data).toMatchObject({ has_more: false, next_cursor: null });
      });

      it.each([
        { name: 'limit 0', query: 'limit=0', field: '/query/limit' },
        { name: 'limit 101', query: 'limit=101', field: '/query/limit' },
        { name: 'limit not a number', query: 'limit=ten', field: '/query/limit' },
        { name: 'starting_after not a UUID', query: 'starting_after=abc', field: '/query/starting_after' },
        { name: 'starting_after of no method of the customer', query: `starting_after=${randomUUID()}`, field: '/query/starting_after' },
        { name: 'unknown query parameter', query: 'page=2', field: '/query/page' },
      ])('400 names the parameter: $name', async ({ query, field }) => {
        const customerId = await createCustomer(t);
        const problem = await expectProblem(await t.fetch(`/customers/${customerId}/payment-methods?${query}`), 400, 'INVALID_REQUEST');
        expect((problem.errors as { path: string }[]).map((e) => e.path)).toContain(field);
      });

      it('401 without credentials', async () => {
        const customerId = await createCustomer(t);
        await expectProblem(await t.fetch(`/customers/${customerId}/payment-methods`, { credentials_: false }), 401, 'INVALID_CREDENTIALS');
      });

      it('404 for an unknown customer and for a customer of another organization', async () => {
        await expectProblem(await t.fetch(`/customers/${randomUUID()}/payment-methods`), 404, 'CUSTOMER_NOT_FOUND');
        const org = await t.createOrganization({ pciCertified: true });
        const theirs = await createCustomer(t, org);
        const res = await enroll(t, theirs, cardBody(org.account_id), {
          headers: { 'public-api-key': org.public_api_key, 'private-secret-key': org.private_secret_key },
        });
        expect(res.status).toBe(201);
        await expectProblem(await t.fetch(`/customers/${theirs}/payment-methods`), 404, 'CUSTOMER_NOT_FOUND');
      });
    });

    describe('loadCardForPayment (for payments)', () => {
      it('opens an ENROLLED card of the organization and nothing else', async () => {
        const customerId = await createCustomer(t);
        const card = await enrollOk(t, customerId, cardBody(account(), { number: MASTERCARD_OK, holder_name: 'ANA' }));
        const opened = await loadCardForPayment(t.db, t.running.deps, t.sandbox.organization_id, card.vaulted_token!);
        expect(opened?.card).toEqual({ number: MASTERCARD_OK, holderName: 'ANA', expirationMonth: 12, expirationYear: FUTURE_YY, securityCode: null, brand: 'MASTERCARD' });
        expect(opened?.method).toMatchObject({ vaultedToken: card.vaulted_token, customerId, accountId: account(), status: 'ENROLLED' });
        expectSchema('PaymentCardData', opened!.method.cardData);
        expect(opened!.method.cardData).toMatchObject({ iin: '52524400', lfd: '0002', holder_name: 'ANA', fingerprint: card.card_data!.fingerprint });

        const org = await t.createOrganization();
        expect(await loadCardForPayment(t.db, t.running.deps, org.organization_id, card.vaulted_token!)).toBeUndefined();
        expect(await loadCardForPayment(t.db, t.running.deps, t.sandbox.organization_id, randomUUID())).toBeUndefined();
        const declined = await enrollOk(t, customerId, cardBody(account(), { number: VISA_INSUFFICIENT_FUNDS }, { verify: {} }));
        expect(await loadCardForPayment(t.db, t.running.deps, t.sandbox.organization_id, declined.vaulted_token!)).toBeUndefined();
        const ach = await enrollOk(t, customerId, { account_id: account(), country: 'US', type: 'ACH_ENROLLMENT' });
        expect(await loadCardForPayment(t.db, t.running.deps, t.sandbox.organization_id, ach.vaulted_token!)).toBeUndefined();
        // A card that has expired since it was enrolled is not usable (and lists as EXPIRED).
        const later = new Date(Date.UTC(2000 + FUTURE_YY + 1, 1, 1));
        expect(await loadCardForPayment(t.db, t.running.deps, t.sandbox.organization_id, card.vaulted_token!, later)).toBeUndefined();
      });
    });
  });
}
