/**
 * The sandbox provider's enrollment page in a real browser (headless Chromium through playwright-core;
 * support/browser.ts picks a system Chromium or the one bundled in npm): a customer opens the
 * redirect_url of an ACH enrollment, approves or declines, and lands on the merchant's callback_url with
 * the outcome; the method becomes ENROLLED or DECLINED.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import type { Schemas } from '@payorch/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromiums, launchBrowser } from './support/browser.js';
import { backends, useServer } from './support/harness.js';
import { cardBody, createCustomer, enrollOk } from './support/vault-fixtures.js';

/** The merchant's site: records every callback the browser is sent to. */
async function merchantSite(): Promise<{ url: string; hits: URL[]; server: Server }> {
  const hits: URL[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://merchant.local');
    if (url.pathname !== '/favicon.ico') hits.push(url);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Merchant</title><h1 id="merchant">Back at the merchant</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
}

// Every Chromium there is (the system one and the npm-bundled one), each named in the test titles, so a
// run's report says which browsers it proved.
const chromiums = await findChromiums();

// Every browser on the embedded database; the first one on PostgreSQL (the page is the same HTML, and the
// browser difference is not the database's).
for (const backend of backends()) for (const exe of backend === 'pglite' ? chromiums : chromiums.slice(0, 1)) {
  describe(`sandbox enrollment page in Chromium (${exe.source}) on ${backend}`, () => {
    const t = useServer(backend);
    let browser: Browser;
    let merchant: Awaited<ReturnType<typeof merchantSite>>;

    beforeAll(async () => {
      browser = await launchBrowser({}, exe);
      merchant = await merchantSite();
    });
    afterAll(async () => {
      await browser?.close();
      await new Promise<void>((resolve) => (merchant ? merchant.server.close(() => resolve()) : resolve()));
    });

    async function startAch(callbackPath: string): Promise<{ customerId: string; method: Schemas['EnrolledPaymentMethod'] }> {
      const customerId = await createCustomer(t);
      const method = await enrollOk(t, customerId, {
        account_id: t.sandbox.account_id,
        country: 'US',
        type: 'ACH_ENROLLMENT',
        callback_url: `${merchant.url}${callbackPath}?order=42`,
        payment_method: { detail: { bank_transfer: { bank_name: 'First Bank', account_type: 'CHECKING', bank_account: '000123456789' } } },
      });
      expect(method.status).toBe('READY_TO_ENROLL');
      return { customerId, method };
    }

    async function statusOf(customerId: string, token: string) {
      const { data } = await t.client.GET('/customers/{customer_id}/payment-methods', { params: { path: { customer_id: customerId } } });
      return data!.payment_methods.find((m) => m.vaulted_token === token);
    }

    it('approve: the method becomes ENROLLED and the browser returns to callback_url with the outcome', async () => {
      const { customerId, method } = await startAch('/ach/done');
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (msg) => msg.type() === 'error' && problems.push(msg.text()));
      page.on('pageerror', (err) => problems.push(err.message));
      page.on('requestfailed', (req) => problems.push(`${req.url()} ${req.failure()?.errorText ?? ''}`));
      try {
        const response = await page.goto(method.redirect_url!);
        expect(response?.status()).toBe(200);
        await expect.poll(() => page.title()).toContain('Approve enrollment');
        const text = await page.locator('main').innerText();
        expect(text).toContain('Sandbox');
        expect(text).toContain('ACH ****6789');
        expect(text).not.toContain('000123456789');
        // The brand image rendered (same origin, allowed by the page's CSP).
        await expect.poll(() => page.locator('img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);

        await Promise.all([page.waitForURL(`${merchant.url}/ach/done?**`), page.getByRole('button', { name: 'Approve' }).click()]);
        expect(await page.locator('#merchant').innerText()).toBe('Back at the merchant');
        const hit = merchant.hits.at(-1)!;
        expect(hit.pathname).toBe('/ach/done');
        expect(Object.fromEntries(hit.searchParams)).toEqual({ order: '42', vaulted_token: method.vaulted_token, status: 'ENROLLED' });
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
      expect(await statusOf(customerId, method.vaulted_token!)).toMatchObject({ status: 'ENROLLED', action: null });
    });

    it('decline: the method becomes DECLINED; opening the link again shows the outcome and cannot change it', async () => {
      const { customerId, method } = await startAch('/ach/declined');
      const page = await browser.newPage();
      try {
        await page.goto(method.redirect_url!);
        await Promise.all([page.waitForURL(`${merchant.url}/ach/declined?**`), page.getByRole('button', { name: 'Decline' }).click()]);
        expect(merchant.hits.at(-1)!.searchParams.get('status')).toBe('DECLINED');

        const again = await page.goto(method.redirect_url!);
        expect(again?.status()).toBe(200);
        expect(await page.locator('#outcome').getAttribute('data-status')).toBe('DECLINED');
        expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
      } finally {
        await page.close();
      }
      expect(await statusOf(customerId, method.vaulted_token!)).toMatchObject({ status: 'DECLINED', sub_status: 'DECLINED_BY_CUSTOMER' });

      // A late "approve" (say, a second tab) is refused.
      const late = await fetch(method.redirect_url!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=approve' });
      expect(late.status).toBe(409);
      expect(await statusOf(customerId, method.vaulted_token!)).toMatchObject({ status: 'DECLINED' });
    });

    it('an unknown link is a 404 page; a card token never gets a hosted page', async () => {
      const page = await browser.newPage();
      try {
        const res = await page.goto(`${t.running.url}/v1/sandbox/enrollments/00000000-0000-4000-8000-000000000000`);
        expect(res?.status()).toBe(404);
        expect(await page.locator('h1').innerText()).toBe('Enrollment not found');
        const card = await enrollOk(t, await createCustomer(t), cardBody(t.sandbox.account_id));
        expect((await page.goto(`${t.running.url}/v1/sandbox/enrollments/${card.vaulted_token}`))?.status()).toBe(404);
      } finally {
        await page.close();
      }
    });
  });
}
