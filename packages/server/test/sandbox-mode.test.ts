/**
 * Sandbox-only behaviour exists only in sandbox mode (issue 12 item 8). Outside it (SANDBOX=false):
 * - the sandbox provider's hosted enrollment page is not mounted: GET and an unauthenticated
 *   `POST decision=approve` answer the API's 404 problem, never the page;
 * - a non-card enrollment goes through the provider adapter, and since no configured provider can enroll
 *   one it is refused with 422 PAYMENT_METHOD_TYPE_NOT_SUPPORTED naming `type`, and nothing is stored
 *   (no record, no redirect_url to a page that does not exist);
 * - the sandbox operations answer 404, and the test card that draws a sandbox chargeback charges nothing
 *   (no sandbox provider exists: 422 NO_ROUTE, see production-mode.test.ts) and draws none.
 * In sandbox mode the same enrollment answers READY_TO_ENROLL with the sandbox provider's page.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectProblem } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { CARDS, createCustomer as createPaymentsCustomer, paymentBody, postPayment } from './support/payments.js';
import { createCustomer, enroll, enrollOk } from './support/vault-fixtures.js';

const nonCard = [
  {
    type: 'ACH_ENROLLMENT',
    body: (accountId: string) => ({
      account_id: accountId, country: 'US', type: 'ACH_ENROLLMENT', callback_url: 'https://merchant.example.com/done',
      payment_method: { detail: { bank_transfer: { bank_account: '990011223344', bank_name: 'First Bank' } } },
    }),
  },
  { type: 'WALLET_PAY_ENROLLMENT', body: (accountId: string) => ({ account_id: accountId, country: 'BR', type: 'WALLET_PAY_ENROLLMENT' }) },
];

const countMethods = async (t: TestServer) => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_methods'))[0]!.n;

for (const backend of backends()) {
  describe(`outside sandbox mode (SANDBOX=false) on ${backend}`, () => {
    const t = useServer(backend, { env: { SANDBOX: 'false' } });

    it.each(nonCard)('$type: 422 PAYMENT_METHOD_TYPE_NOT_SUPPORTED naming /body/type; nothing stored', async ({ type, body }) => {
      const customerId = await createCustomer(t);
      const before = await countMethods(t);
      const problem = await expectProblem(await enroll(t, customerId, body(t.sandbox.account_id)), 422, 'PAYMENT_METHOD_TYPE_NOT_SUPPORTED');
      expect(problem.errors).toEqual([{ path: '/body/type', message: expect.stringContaining(type) }]);
      expect(await countMethods(t)).toBe(before);
    });

    it('the sandbox enrollment page is not mounted: GET, and an unauthenticated POST decision=approve, get the 404 problem', async () => {
      const page = `${t.baseUrl}/sandbox/enrollments/${randomUUID()}`;
      await expectProblem(await fetch(page), 404, 'NOT_FOUND');
      const approve = await fetch(page, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=approve' });
      await expectProblem(approve, 404, 'NOT_FOUND');
    });

    it('the sandbox operations answer 404 NOT_FOUND', async () => {
      const paymentId = randomUUID();
      const post = (path: string, body: unknown) => t.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await expectProblem(await post(`/sandbox/payments/${paymentId}/chargebacks`, {}), 404, 'NOT_FOUND');
      await expectProblem(await post(`/sandbox/payments/${paymentId}/disputes/resolve`, { outcome: 'WON' }), 404, 'NOT_FOUND');
    });

    it('the sandbox test card 4000000000000259 charges nothing and draws no chargeback: no provider runs (422 NO_ROUTE, production-mode.test.ts)', async () => {
      await expectProblem(await postPayment(t, paymentBody(t, await createPaymentsCustomer(t), { card: CARDS.chargebackFollows })), 422, 'NO_ROUTE');
      await t.running.deps.services.payments.outbox.runOnce();
      expect(await t.db.query('SELECT id FROM payments')).toEqual([]);
      expect(await t.db.query("SELECT id FROM outbox WHERE topic = 'sandbox.chargeback'")).toEqual([]);
    });
  });

  describe(`in sandbox mode on ${backend}`, () => {
    const t = useServer(backend);

    it.each(nonCard)('$type: READY_TO_ENROLL with the sandbox provider page as redirect_url, and the page is served', async ({ body }) => {
      const method = await enrollOk(t, await createCustomer(t), body(t.sandbox.account_id));
      expect(method).toMatchObject({ status: 'READY_TO_ENROLL', action: 'REDIRECT_URL' });
      expect(method.redirect_url).toBe(`${t.baseUrl}/sandbox/enrollments/${method.vaulted_token}`);
      const page = await fetch(method.redirect_url!);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    });
  });
}
