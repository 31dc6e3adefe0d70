/**
 * What an anonymous visitor can make the service do through the hosted checkout (issue 25; the "Limits"
 * of docs/guides/checkout.md): a payment link's page writes nothing (its checkout session is made when
 * the shopper submits a card); the hosted pages and their calls are limited per client address and per
 * organization (one merchant's hammered link does not limit another's); the public-key routes are
 * limited per key and per session, without using up the organization's API budget; a checkout or
 * customer session takes a bounded number of cards. One server per backend, behind a "proxy" (TRUST_PROXY)
 * so that each test can speak from its own client addresses.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { checkoutRepository } from '../src/checkout/repository.js';
import type { Database } from '../src/db/database.js';
import { inRequestScope } from '../src/platform/request-scope.js';
import { RetentionJob } from '../src/retention/job.js';
import { expectProblem } from './support/assertions.js';
import { backends, useServer, type Credentials, type TestServer } from './support/harness.js';
import { inOneWindow } from './support/minute-window.js';
import { CARDS, createCustomer, rawCard } from './support/payments.js';

const PER_ADDRESS = 8;
const PER_ORGANIZATION = 12;
const PER_KEY = 30;
const PER_SESSION = 10;
const CARDS_PER_SESSION = 4;
const API_PER_MINUTE = 40;

const json = { 'content-type': 'application/json' };
let lastAddress = 0;
/** A client address of its own (TEST-NET-3; up to 65 k per run). */
const address = () => {
  lastAddress += 1;
  return `203.0.${113 + Math.floor(lastAddress / 250)}.${lastAddress % 250}`;
};
const from = (ip: string) => ({ 'x-forwarded-for': ip });

const secretHeaders = (c: Credentials) => ({ ...json, 'public-api-key': c.public_api_key, 'private-secret-key': c.private_secret_key });

async function createLink(t: TestServer, c: Credentials, overrides: Partial<Schemas['PaymentLinkCreateRequest']> = {}): Promise<Schemas['PaymentLink']> {
  const res = await t.fetch('/payment-links', {
    method: 'POST',
    headers: secretHeaders(c),
    body: JSON.stringify({ account_id: c.account_id, country: 'BR', description: 'Invoice 7', amount: { currency: 'BRL', value: 25 }, one_time_use: false, ...overrides }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as Schemas['PaymentLink'];
}

async function createSession(t: TestServer, c: Credentials): Promise<Schemas['CheckoutSession']> {
  const res = await t.fetch('/checkout/sessions', {
    method: 'POST',
    headers: secretHeaders(c),
    body: JSON.stringify({ account_id: c.account_id, merchant_order_id: `o-${randomUUID().slice(0, 8)}`, payment_description: 'Shoes', country: 'BR', amount: { currency: 'BRL', value: 10 } }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as Schemas['CheckoutSession'];
}

function tokenize(t: TestServer, sessionId: string, publicKey: string, ip: string, card: string = CARDS.approved): Promise<Response> {
  const c = rawCard(card);
  return t.fetch(`/checkout/sessions/${sessionId}/token`, {
    method: 'POST',
    credentials_: false,
    headers: { ...json, ...from(ip), 'public-api-key': publicKey },
    body: JSON.stringify({ payment_method: { type: 'CARD', card: { number: c.number, expiration_month: c.expiration_month, expiration_year: c.expiration_year, security_code: c.security_code, holder_name: c.holder_name } } }),
  });
}

/**
 * The service's database, with one statement (HELD) that holds its organization's permit of the
 * per-organization gate (db/organization-gate.ts) until `let go` is called, without holding a connection.
 */
const HELD = 'SELECT 1 AS held_permit';
function permitHolder() {
  let letGo: () => void = () => {};
  let held: Promise<void> = Promise.resolve();
  const wrap = (db: Database): Database => ({
    kind: db.kind,
    ...(db.counters ? { counters: db.counters } : {}),
    query: async <R>(text: string, params?: readonly unknown[]) => (text === HELD ? (await held, [] as R[]) : db.query<R>(text, params)),
    exec: (sql: string) => db.exec(sql),
    transaction: (fn) => db.transaction(fn),
    ping: () => db.ping(),
    close: () => db.close(),
  });
  const hold = () => {
    held = new Promise<void>((resolve) => (letGo = resolve));
    return () => letGo();
  };
  return { wrap, hold };
}

const linkSessions = async (t: TestServer, code: string) =>
  Number((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM checkout_sessions WHERE payment_link_code = $1', [code]))[0]!.n);

for (const backend of backends()) {
  describe(`hosted checkout limits on ${backend}`, () => {
    const t = useServer(backend, {
      env: {
        TRUST_PROXY: '1',
        RATE_LIMIT_STORE: 'database',
        RATE_LIMIT_PER_MINUTE: String(API_PER_MINUTE),
        HOSTED_RATE_LIMIT_PER_ADDRESS: String(PER_ADDRESS),
        HOSTED_RATE_LIMIT_PER_ORGANIZATION: String(PER_ORGANIZATION),
        PUBLIC_KEY_RATE_LIMIT_PER_MINUTE: String(PER_KEY),
        CHECKOUT_SESSION_RATE_LIMIT_PER_MINUTE: String(PER_SESSION),
        CHECKOUT_SESSION_MAX_CARDS: String(CARDS_PER_SESSION),
      },
    });
    const page = (url: string, ip: string) => fetch(url, { headers: from(ip) });
    const pageOrigin = () => new URL(t.baseUrl).origin;

    it("a payment link's page writes nothing per visit; its checkout session is made when the shopper submits, from the page's origin only", async () => {
      const org = await t.createOrganization();
      const link = await createLink(t, org);
      for (let i = 0; i < 3; i++) {
        const res = await page(link.checkout_url, address());
        expect(res.status).toBe(200);
        expect(await res.text()).not.toMatch(/checkout_session/);
      }
      expect(await linkSessions(t, link.code)).toBe(0);

      const start = (headers: Record<string, string>) => fetch(`${link.checkout_url}/session`, { method: 'POST', headers: { ...json, ...from(address()), ...headers }, body: '{}' });
      expect((await start({ origin: 'https://evil.example' })).status).toBe(403);
      expect(await linkSessions(t, link.code)).toBe(0);
      const res = await start({ origin: pageOrigin() });
      const body = (await res.json()) as { checkout_session: string; submit_url: string };
      expect(res.status, JSON.stringify(body)).toBe(201);
      expect(body.submit_url).toBe(`/v1/checkout/sessions/${body.checkout_session}/token`);
      expect(await linkSessions(t, link.code)).toBe(1);
      // The session is the link's: its tokens are bound to the link's amount, and its page pays it.
      expect((await tokenize(t, body.checkout_session, org.public_api_key, address())).status).toBe(201);
      // A canceled link makes no more sessions.
      await t.fetch(`/payment-links/${link.code}/cancel`, { method: 'POST', headers: secretHeaders(org) });
      expect((await start({ origin: pageOrigin() })).status).toBe(410);
      expect(await linkSessions(t, link.code)).toBe(1);
    });

    it("retention deletes a link's sessions that expired unpaid, with their tokens; a paid one and a merchant's own session stay", async () => {
      const link = await createLink(t, t.sandbox);
      const start = async () => {
        const res = await fetch(`${link.checkout_url}/session`, { method: 'POST', headers: { ...json, ...from(address()), origin: pageOrigin() }, body: '{}' });
        expect(res.status).toBe(201);
        return ((await res.json()) as { checkout_session: string }).checkout_session;
      };
      const tokenOf = async (session: string) => ((await (await tokenize(t, session, t.sandbox.public_api_key, address())).json()) as { token: string }).token;
      const left = await start();
      const leftToken = await tokenOf(left);
      const paid = await start();
      const pay = await fetch(`${link.checkout_url}/pay`, { method: 'POST', headers: { ...json, ...from(address()) }, body: JSON.stringify({ token: await tokenOf(paid), checkout_session: paid }) });
      expect(await pay.json()).toMatchObject({ paid: true, status: 'SUCCEEDED' });
      const own = await createSession(t, t.sandbox);
      await t.db.query("UPDATE checkout_sessions SET expires_at = clock_timestamp() - interval '1 second' WHERE payment_link_code = $1 OR id = $2", [link.code, own.checkout_session]);
      // Purged once every token of the session expired over an hour ago (the next test says why).
      await t.db.query("UPDATE one_time_tokens SET expires_at = clock_timestamp() - interval '61 minutes' WHERE checkout_session = ANY($1::text[])", [[left, paid]]);

      const report = await new RetentionJob({ db: t.db, log: t.running.deps.log, pauseMs: 0 }).runOnce();
      expect(report.unpaidLinkSessions).toBeGreaterThanOrEqual(1);
      const ids = (await t.db.query<{ id: string }>('SELECT id FROM checkout_sessions WHERE id = ANY($1::text[])', [[left, paid, own.checkout_session]])).map((r) => r.id);
      expect(ids.sort()).toEqual([paid, own.checkout_session].sort());
      expect(await t.db.query('SELECT 1 FROM one_time_tokens WHERE token = $1', [leftToken])).toHaveLength(0);
      expect(await t.fetch(`/payment-links/${link.code}`).then((r) => r.json())).toMatchObject({ payments_number: 1 });
    });

    it("retention keeps an expired link session while a token of it is usable, or expired less than an hour ago: no deadlock with a payment claiming that token", async () => {
      const link = await createLink(t, t.sandbox);
      const res = await fetch(`${link.checkout_url}/session`, { method: 'POST', headers: { ...json, ...from(address()), origin: pageOrigin() }, body: '{}' });
      const session = ((await res.json()) as { checkout_session: string }).checkout_session;
      const token = ((await (await tokenize(t, session, t.sandbox.public_api_key, address())).json()) as { token: string }).token;
      // The session expires; its token (10 minutes) is still usable.
      await t.db.query("UPDATE checkout_sessions SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1", [session]);
      const purge = () => t.db.transaction((tx) => checkoutRepository.purgeUnpaidLinkSessions(tx, 100));
      // A payment's claimToken locks the token, then the session; the retention run goes meanwhile.
      let purging: Promise<number> | undefined;
      const locked = await t.db.transaction(async (tx) => {
        await checkoutRepository.lockToken(tx, t.sandbox.organization_id, token);
        purging = purge();
        await new Promise((resolve) => setTimeout(resolve, 300));
        return checkoutRepository.findSession(tx, t.sandbox.organization_id, session, true);
      });
      await purging;
      expect(locked?.id).toBe(session);
      const kept = async () => [
        (await t.db.query('SELECT 1 FROM checkout_sessions WHERE id = $1', [session])).length,
        (await t.db.query('SELECT 1 FROM one_time_tokens WHERE token = $1', [token])).length,
      ];
      expect(await kept()).toEqual([1, 1]);
      // Its token expired 59 minutes ago: still kept; 61 minutes ago: purged with it.
      await t.db.query("UPDATE one_time_tokens SET expires_at = clock_timestamp() - interval '59 minutes' WHERE token = $1", [token]);
      await purge();
      expect(await kept()).toEqual([1, 1]);
      await t.db.query("UPDATE one_time_tokens SET expires_at = clock_timestamp() - interval '61 minutes' WHERE token = $1", [token]);
      await purge();
      expect(await kept()).toEqual([0, 0]);
    });

    it('the hosted pages and their calls are limited per client address: 429 with Retry-After, other addresses unaffected', async () => {
      const org = await t.createOrganization();
      const link = await createLink(t, org);
      const session = await createSession(t, org);
      // Judged only when the whole burst fell in one minute window (a fresh address per try).
      const burst = await inOneWindow(async () => {
        const ip = address();
        const statuses: number[] = [];
        for (let i = 0; i < PER_ADDRESS; i++) statuses.push((await page(link.checkout_url, ip)).status);
        const limited = await page(link.checkout_url, ip);
        const limitedText = await limited.text();
        // Every hosted route of that address, and the public-key API, is refused before any work.
        const sessionPage = await page(`${pageOrigin()}/checkout/sessions/${session.checkout_session}?public_key=${org.public_api_key}`, ip);
        const pay = await fetch(`${link.checkout_url}/pay`, { method: 'POST', headers: { ...json, ...from(ip) }, body: JSON.stringify({ token: randomUUID(), checkout_session: randomUUID() }) });
        const token = await tokenize(t, session.checkout_session, org.public_api_key, ip);
        return { statuses, limited, limitedText, sessionPage, pay, token };
      });
      expect(burst.statuses).toEqual(Array(PER_ADDRESS).fill(200));
      expect(burst.limited.status).toBe(429);
      expect(Number(burst.limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(burst.limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(burst.limitedText).toContain('data-code="RATE_LIMITED"');
      expect(burst.sessionPage.status).toBe(429);
      await expectProblem(burst.pay, 429, 'RATE_LIMITED');
      expect(burst.pay.headers.get('retry-after')).toMatch(/^\d+$/);
      await expectProblem(burst.token, 429, 'RATE_LIMITED');
      // Another shopper is served.
      expect((await page(link.checkout_url, address())).status).toBe(200);
    });

    it("one organization's hammered link does not limit another organization's pages", async () => {
      const [a, b] = [await t.createOrganization(), await t.createOrganization()];
      const linkA = await createLink(t, a);
      const linkB = await createLink(t, b);
      const burst = await inOneWindow(async () => {
        const statuses: number[] = [];
        // From fresh addresses each time: the organization's own limit.
        for (let i = 0; i < PER_ORGANIZATION; i++) statuses.push((await page(linkA.checkout_url, address())).status);
        const limited = await page(linkA.checkout_url, address());
        const other = await page(linkB.checkout_url, address());
        return { statuses, limited, other };
      });
      expect(burst.statuses).toEqual(Array(PER_ORGANIZATION).fill(200));
      expect(burst.limited.status).toBe(429);
      expect(burst.limited.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(burst.other.status).toBe(200);
      // The merchant's own API is not the hosted pages' budget.
      expect((await t.fetch(`/payment-links/${linkA.code}`, { headers: secretHeaders(a) })).status).toBe(200);
    });

    it('a checkout session tokenizes a bounded number of cards', async () => {
      const org = await t.createOrganization();
      const capped = await createSession(t, org);
      for (let i = 0; i < CARDS_PER_SESSION; i++) {
        const res = await tokenize(t, capped.checkout_session, org.public_api_key, address());
        expect(res.status).toBe(201);
        // The headers tell the public key's budget, not the organization's.
        expect(res.headers.get('ratelimit-limit')).toBe(String(PER_KEY));
      }
      await expectProblem(await tokenize(t, capped.checkout_session, org.public_api_key, address()), 409, 'INVALID_STATUS');
      const tokens = await t.db.query('SELECT 1 FROM one_time_tokens WHERE checkout_session = $1', [capped.checkout_session]);
      expect(tokens).toHaveLength(CARDS_PER_SESSION);
    });

    it("the public-key token route is limited per session and per key, and does not spend the organization's API budget", async () => {
      // A fresh organization per try: its key's and sessions' counts start at zero.
      const burst = await inOneWindow(async () => {
        const org = await t.createOrganization();
        const sessions = [await createSession(t, org)];
        const invalid = (s: Schemas['CheckoutSession']) => tokenize(t, s.checkout_session, org.public_api_key, address(), '4507990000000003');
        // Per session, whatever the request (invalid cards included), from any address.
        const perSession: number[] = [];
        for (let i = 0; i < PER_SESSION; i++) perSession.push((await invalid(sessions[0]!)).status);
        const sessionLimited = await tokenize(t, sessions[0]!.checkout_session, org.public_api_key, address());
        // The same session under an escaped path is the same bucket (it reaches the same session).
        const id = sessions[0]!.checkout_session;
        const escapedLimited = await tokenize(t, `%${id.charCodeAt(0).toString(16).toUpperCase()}${id.slice(1)}`, org.public_api_key, address());
        let publicCalls = PER_SESSION + 2;
        // Per key: the rest of the key's budget on new sessions, then 429 on any session of the key.
        const rest: number[] = [];
        while (publicCalls < PER_KEY) {
          if (rest.length % PER_SESSION === 0) sessions.push(await createSession(t, org));
          rest.push((await invalid(sessions.at(-1)!)).status);
          publicCalls++;
        }
        const keyLimited = await tokenize(t, (await createSession(t, org)).checkout_session, org.public_api_key, address());
        // The merchant's servers, with the secret key, are still served: the public-key calls are not in
        // the organization's RATE_LIMIT_PER_MINUTE (these and the secret-key calls together are past it).
        const secretCalls: number[] = [];
        for (let i = 0; i < 6; i++) secretCalls.push((await t.fetch(`/checkout/sessions/${sessions[0]!.checkout_session}`, { headers: secretHeaders(org) })).status);
        return { perSession, sessionLimited, escapedLimited, rest, keyLimited, secretCalls, total: publicCalls + 1 + sessions.length + 1 + secretCalls.length };
      });
      expect(burst.perSession).toEqual(Array(PER_SESSION).fill(422));
      await expectProblem(burst.sessionLimited, 429, 'RATE_LIMITED');
      await expectProblem(burst.escapedLimited, 429, 'RATE_LIMITED');
      expect(burst.sessionLimited.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(burst.rest.every((s) => s === 422)).toBe(true);
      await expectProblem(burst.keyLimited, 429, 'RATE_LIMITED');
      expect(burst.secretCalls).toEqual(Array(6).fill(200));
      expect(burst.total).toBeGreaterThan(API_PER_MINUTE);
      // Another organization's key is unaffected.
      const other = await t.createOrganization();
      expect((await tokenize(t, (await createSession(t, other)).checkout_session, other.public_api_key, address())).status).toBe(201);
    });

    it('a customer session takes a bounded number of cards', async () => {
      const customerId = await createCustomer(t);
      const res = await t.fetch('/customers/sessions', { method: 'POST', headers: json, body: JSON.stringify({ account_id: t.sandbox.account_id, country: 'BR', customer_id: customerId }) });
      const session = (await res.json()) as Schemas['CustomerSession'];
      expect(res.status).toBe(201);
      const enroll = () =>
        t.fetch(`/customers/sessions/${session.customer_session}/payment-methods`, {
          method: 'POST',
          credentials_: false,
          headers: { ...json, ...from(address()), 'public-api-key': t.sandbox.public_api_key },
          body: JSON.stringify({ account_id: t.sandbox.account_id, payment_method_type: 'CARD', country: 'BR', card_data: rawCard(CARDS.approved) }),
        });
      for (let i = 0; i < CARDS_PER_SESSION; i++) expect((await enroll()).status).toBeLessThan(300);
      await expectProblem(await enroll(), 409, 'INVALID_STATUS');
    });
  });

  describe(`a payment link's calls and the organization's database bound on ${backend}`, () => {
    // DATABASE_POOL_SIZE 2: one permit per organization (half the pool).
    const permits = permitHolder();
    const t = useServer(backend, { env: { TRUST_PROXY: '1', DATABASE_POOL_SIZE: '2' }, wrapDatabase: permits.wrap });

    it("the link page's session and pay calls wait for a permit of the link's organization, as its API requests do", async () => {
      const org = await t.createOrganization();
      const link = await createLink(t, org);
      const origin = new URL(t.baseUrl).origin;
      const startSession = () => fetch(`${link.checkout_url}/session`, { method: 'POST', headers: { ...json, ...from(address()), origin }, body: '{}' });
      const waiting = (res: Promise<Response>) => Promise.race([res.then((r) => r.status), new Promise((resolve) => setTimeout(() => resolve('waiting'), 500))]);

      // The organization's only permit is taken (as by one of its requests running a statement).
      let letGo = permits.hold();
      let holding = inRequestScope(org.organization_id, () => t.running.deps.db.query(HELD));
      let pending = startSession();
      expect(await waiting(pending)).toBe('waiting');
      letGo();
      await holding;
      const started = await pending;
      expect(started.status).toBe(201);
      const session = ((await started.json()) as { checkout_session: string }).checkout_session;
      const token = ((await (await tokenize(t, session, org.public_api_key, address())).json()) as { token: string }).token;

      letGo = permits.hold();
      holding = inRequestScope(org.organization_id, () => t.running.deps.db.query(HELD));
      pending = fetch(`${link.checkout_url}/pay`, { method: 'POST', headers: { ...json, ...from(address()), origin }, body: JSON.stringify({ token, checkout_session: session }) });
      expect(await waiting(pending)).toBe('waiting');
      expect(await t.db.query('SELECT 1 FROM payments WHERE organization_id = $1', [org.organization_id])).toHaveLength(0);
      letGo();
      await holding;
      const paid = await pending;
      expect(paid.status, await paid.clone().text()).toBe(200);
      expect(await paid.json()).toMatchObject({ paid: true, status: 'SUCCEEDED' });
    });
  });
}
