/**
 * The hosted card form in a real browser (one Chromium for the file; support/browser.ts), against a real
 * server on each backend. A merchant's page on another origin mounts the form with the client's browser
 * helper (@payorch/client/checkout, its built ESM file), the shopper types a card, the page receives the
 * one-time token and the merchant's server pays with it. A hostile page that frames the form gets nothing;
 * a customer session enrolls a card through the form; a payment link's page is paid through it and then
 * refuses, as does a canceled link.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Browser, Frame, FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './support/browser.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { createCustomer } from './support/payments.js';

const HELPER = fileURLToPath(new URL('../../client/dist/checkout.js', import.meta.url));
const PAN = '4507990000000002';
const YY = String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0');

interface Site {
  url: string;
  server: Server;
  /** Every request the site received (path and body), to show no card number ever reached it. */
  seen: string[];
}

/**
 * A merchant's site: /shop mounts the form with the client helper (query: payorch, key, session or
 * customer_session, lang) and keeps the result in window.formResult; /frame?src= frames any address
 * without the helper (the hostile page); /done is a callback_url.
 */
async function site(): Promise<Site> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push(`${req.url} ${body}`);
      const url = new URL(req.url ?? '/', 'http://site.local');
      if (url.pathname === '/client/checkout.js') {
        return res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(HELPER));
      }
      const page = (script: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>Shop</title><h1>Shop</h1><div id="card"></div>${script}`);
      if (url.pathname === '/shop') {
        return page(`<script type="module">
import { mountCardForm } from '/client/checkout.js';
const q = new URLSearchParams(location.search);
window.formResult = mountCardForm(document.getElementById('card'), {
  origin: q.get('payorch'), publicKey: q.get('key'), lang: q.get('lang') || undefined,
  ...(q.get('session') ? { sessionId: q.get('session') } : { customerSessionId: q.get('customer_session') }),
});
</script>`);
      }
      if (url.pathname === '/frame') {
        return page(`<iframe title="Card form" src="${url.searchParams.get('src')!.replace(/"/g, '&quot;')}"></iframe>
<script>window.messages = []; addEventListener('message', (e) => window.messages.push({ origin: e.origin, data: e.data }));</script>`);
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Back at the shop</title><h1 id="back">Back at the shop</h1>');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, seen };
}

/** Fills the card fields (one input event each, as a paste or autofill gives; the first test also types key by key). */
async function fillCard(form: FrameLocator | Frame, card: { holder?: string; number?: string; expiry?: string; code?: string } = {}) {
  await form.locator('#holder').fill(card.holder ?? 'MARIA SILVA');
  await form.locator('#number').fill(card.number ?? PAN);
  await form.locator('#expiry').fill(card.expiry ?? `12/${YY}`);
  await form.locator('#security-code').fill(card.code ?? '123');
}

/** Console errors, CSP violations and failed requests of a page and its frames. */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (msg) => msg.type() === 'error' && problems.push(msg.text()));
  page.on('pageerror', (err) => problems.push(err.message));
  return problems;
}

let browser: Browser;
beforeAll(async () => {
  if (!existsSync(HELPER)) throw new Error(`${HELPER} is missing: build the client first (npx turbo run build --filter=@payorch/client)`);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

for (const backend of backends()) {
  describe(`hosted card form in Chromium on ${backend}`, () => {
    const t = useServer(backend);
    let merchant: Site;
    let hostile: Site;

    beforeAll(async () => {
      [merchant, hostile] = await Promise.all([site(), site()]);
    });
    afterAll(async () => {
      await Promise.all([merchant, hostile].map((s) => s && new Promise<void>((resolve) => s.server.close(() => resolve()))));
      // The card number reached payorch only: neither site ever received it.
      for (const s of [merchant, hostile]) expect(s?.seen.join('\n') ?? '').not.toContain(PAN);
    });

    const json = (res: Response) => res.json() as Promise<Record<string, unknown>>;
    async function post(path: string, body: unknown, expected = 201) {
      const headers = { 'x-idempotency-key': randomUUID(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
      const res = await t.fetch(path, { method: 'POST', headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const answer = await json(res);
      expect(res.status, JSON.stringify(answer)).toBe(expected);
      return answer;
    }
    const newSession = (extra: Record<string, unknown> = {}) =>
      post('/checkout/sessions', {
        account_id: t.sandbox.account_id,
        merchant_order_id: `order-${Date.now()}`,
        payment_description: 'Running shoes',
        country: 'BR',
        amount: { currency: 'BRL', value: 150.5 },
        allowed_origins: [merchant.url],
        callback_url: `${merchant.url}/done`,
        ...extra,
      }) as Promise<{ checkout_session: string }>;
    const shopUrl = (query: Record<string, string>) => `${merchant.url}/shop?${new URLSearchParams({ payorch: t.running.url, key: t.sandbox.public_api_key, ...query })}`;

    it('a merchant page embeds the form: typed card checked in the browser, token to the page only, paid server to server, not twice', async () => {
      const session = await newSession();
      const page = await browser.newPage();
      const problems = watch(page);
      const tokenCalls: string[] = [];
      page.on('request', (r) => r.url().includes('/token') && tokenCalls.push(r.url()));
      try {
        await page.goto(shopUrl({ session: session.checkout_session, lang: 'pt' }));
        const form = page.frameLocator('iframe');
        // Localized, labelled fields (found by their accessible names).
        await form.getByLabel('Número do cartão').waitFor();
        await fillCard(form, { number: '4507990000000003' });
        await form.getByRole('button', { name: /Pagar/ }).click();
        await expect.poll(() => form.locator('#number-error').innerText()).toContain('não é válido');
        expect(await form.locator('#number').getAttribute('aria-invalid')).toBe('true');
        expect(tokenCalls).toEqual([]); // nothing was sent

        await fillCard(form);
        // The brand shows as the number is typed: after its first digits already.
        await form.locator('#number').fill('');
        await form.locator('#number').pressSequentially('45079');
        expect(await form.locator('#number-brand').getAttribute('data-brand')).toBe('VISA');
        expect(await form.locator('#number-brand').textContent()).toBe('Bandeira do cartão: Visa');
        await form.locator('#number').pressSequentially('90000000002');
        expect(await form.locator('#number').inputValue()).toBe('4507 9900 0000 0002');
        await form.locator('#security-code').press('Enter'); // the keyboard submits
        const result = (await page.evaluate(() => (window as unknown as { formResult: Promise<unknown> }).formResult)) as { token: string; card: unknown; checkout_session: string };
        expect(result).toMatchObject({ checkout_session: session.checkout_session, card: { brand: 'VISA', lfd: '0002' } });
        expect(result.token).toMatch(/^[0-9a-f-]{36}$/);
        expect(tokenCalls).toHaveLength(1);
        await expect.poll(() => form.locator('#status').getAttribute('data-outcome')).toBe('SENT');
        // The number never existed in the merchant's page.
        expect(await page.content()).not.toContain(PAN);
        expect(problems).toEqual([]);

        const payment = { account_id: t.sandbox.account_id, country: 'BR', description: 'Running shoes', merchant_order_id: 'order-1', amount: { currency: 'BRL', value: 150.5 }, customer_payer: {}, workflow: 'SDK_CHECKOUT', payment_method: { type: 'CARD', token: result.token } };
        expect(await post('/payments', payment)).toMatchObject({ status: 'SUCCEEDED' });
        expect(await post('/payments', { ...payment, merchant_order_id: 'order-2' }, 409)).toMatchObject({ code: 'TOKEN_ALREADY_USED' });
      } finally {
        await page.close();
      }
    });

    it('a hostile page framing the form gets nothing: the browser refuses to render it; a foreign parent_origin, another organization’s key or an unknown session get no form', async () => {
      const session = await newSession();
      const formUrl = `${t.running.url}/checkout/sessions/${session.checkout_session}?${new URLSearchParams({ public_key: t.sandbox.public_api_key, parent_origin: merchant.url })}`;
      const page = await browser.newPage();
      try {
        const framed = page.waitForEvent('console', (msg) => msg.text().includes('frame-ancestors'));
        await page.goto(`${hostile.url}/frame?src=${encodeURIComponent(formUrl)}`);
        await framed; // Chromium: "Refused to frame … because an ancestor violates … frame-ancestors"
        const frame = page.frames().find((f) => f !== page.mainFrame())!;
        expect(await frame.locator('#card-form').count()).toBe(0);
        expect(await page.evaluate(() => (window as unknown as { messages: unknown[] }).messages)).toEqual([]);
      } finally {
        await page.close();
      }
      // Asking for the hostile origin itself: not an allowed origin, so no form, and framing is forbidden.
      const res = await fetch(formUrl.replace(encodeURIComponent(merchant.url), encodeURIComponent(hostile.url)));
      expect(res.status).toBe(403);
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(await res.text()).not.toContain('id="card-form"');
      // Another organization's public key finds no such session; nor does an unknown id.
      const other = await t.createOrganization();
      expect((await fetch(formUrl.replace(t.sandbox.public_api_key, other.public_api_key))).status).toBe(404);
      expect((await fetch(formUrl.replace(session.checkout_session, '00000000-0000-4000-8000-000000000000'))).status).toBe(404);
      // And the allowed page's form answers only that origin.
      const ok = await fetch(formUrl);
      expect(ok.headers.get('content-security-policy')).toContain(`frame-ancestors ${merchant.url};`);
      expect(ok.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(ok.headers.get('x-frame-options')).toBeNull();
    });

    it('without a frame the form returns to callback_url with the token (redirect mode)', async () => {
      const session = await newSession();
      const page = await browser.newPage();
      try {
        await page.goto(`${t.running.url}/checkout/sessions/${session.checkout_session}?public_key=${t.sandbox.public_api_key}&lang=en`);
        await fillCard(page.mainFrame());
        await Promise.all([page.waitForURL(`${merchant.url}/done?**`), page.getByRole('button', { name: /Pay/ }).click()]);
        const back = new URL(page.url());
        expect(back.searchParams.get('checkout_session')).toBe(session.checkout_session);
        expect(back.searchParams.get('one_time_token')).toMatch(/^[0-9a-f-]{36}$/);
      } finally {
        await page.close();
      }
    });

    it('a customer session enrolls the card through the form (Spanish)', async () => {
      const customerId = await createCustomer(t);
      const cs = (await post('/customers/sessions', { account_id: t.sandbox.account_id, country: 'BR', customer_id: customerId, allowed_origins: [merchant.url] })) as { customer_session: string };
      const page = await browser.newPage();
      try {
        await page.goto(shopUrl({ customer_session: cs.customer_session, lang: 'es' }));
        const form = page.frameLocator('iframe');
        await form.getByLabel('Número de tarjeta').waitFor();
        await fillCard(form, { number: '5252440000000002' });
        expect(await form.locator('#number-brand').getAttribute('data-brand')).toBe('MASTERCARD');
        await form.getByRole('button', { name: 'Guardar tarjeta' }).click();
        const result = (await page.evaluate(() => (window as unknown as { formResult: Promise<unknown> }).formResult)) as { vaulted_token: string; customer_session: string };
        expect(result.customer_session).toBe(cs.customer_session);
        const list = await json(await t.fetch(`/customers/${customerId}/payment-methods`));
        expect(list.payment_methods).toEqual([expect.objectContaining({ vaulted_token: result.vaulted_token, status: 'ENROLLED' })]);
      } finally {
        await page.close();
      }
    });

    it('a payment link page shows amount and description, is paid through the form, then refuses, as do a canceled and an expired link; its pay call refuses another origin', async () => {
      const link = (await post('/payment-links', {
        account_id: t.sandbox.account_id,
        country: 'BR',
        description: 'Invoice 2026-118',
        amount: { currency: 'BRL', value: 250 },
        payment_method_types: ['CARD'],
        one_time_use: true,
      })) as { code: string; checkout_url: string };
      const page = await browser.newPage();
      const problems = watch(page);
      try {
        const linkSessions = async () => (await t.db.query('SELECT 1 FROM checkout_sessions WHERE payment_link_code = $1', [link.code])).length;
        await page.goto(`${link.checkout_url}?lang=en`);
        expect(await page.locator('#description').innerText()).toBe('Invoice 2026-118');
        // The visit wrote nothing; the shopper's submit makes the link's one checkout session.
        expect(await linkSessions()).toBe(0);
        expect(await page.locator('#summary').innerText()).toContain('R$');
        // A declined card first: the page keeps its session for the next card.
        await fillCard(page.mainFrame(), { number: '4507990000000028' });
        await page.getByRole('button', { name: /Pay/ }).click();
        await expect.poll(() => page.locator('#status').getAttribute('data-outcome')).toBe('DECLINED');
        await fillCard(page.mainFrame());
        await page.getByRole('button', { name: /Pay/ }).click();
        await expect.poll(() => page.locator('#status').getAttribute('data-outcome')).toBe('SUCCEEDED');
        expect(await page.locator('#status').innerText()).toContain('Payment approved');
        expect(problems).toEqual([]);
        expect(await json(await t.fetch(`/payment-links/${link.code}`))).toMatchObject({ status: 'PAID', payments_number: 1 });
        expect(await linkSessions()).toBe(1);

        const again = await page.goto(link.checkout_url);
        expect(again?.status()).toBe(410);
        expect(await page.locator('#notice').getAttribute('data-code')).toBe('PAID');
      } finally {
        await page.close();
      }
      const other = (await post('/payment-links', { account_id: t.sandbox.account_id, country: 'BR', amount: { currency: 'BRL', value: 10 } })) as { code: string; checkout_url: string };
      await post(`/payment-links/${other.code}/cancel`, undefined, 200);
      const canceled = await fetch(other.checkout_url);
      expect(canceled.status).toBe(410);
      expect(await canceled.text()).toContain('data-code="CANCELED"');
      // Past its window: refused too.
      const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
      const window = { start_at: ago(120_000), finish_at: ago(60_000) };
      const expired = (await post('/payment-links', { account_id: t.sandbox.account_id, country: 'BR', amount: { currency: 'BRL', value: 10 }, availability: window })) as { checkout_url: string };
      const late = await fetch(expired.checkout_url);
      expect(late.status).toBe(410);
      expect(await late.text()).toContain('data-code="EXPIRED"');
      // The pay call answers the link page's own origin only.
      const forged = await fetch(`${link.checkout_url}/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: hostile.url },
        body: JSON.stringify({ token: '00000000-0000-4000-8000-000000000000', checkout_session: '00000000-0000-4000-8000-000000000000' }),
      });
      expect(forged.status).toBe(403);
    });
  });
}
