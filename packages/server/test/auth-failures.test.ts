/**
 * Unauthenticated traffic is limited (issue 12, item 10): failed authentications count per client
 * address (AUTH_FAILURES_PER_MINUTE); past the limit the address gets 429 RATE_LIMITED + Retry-After,
 * whatever key it sends, for the rest of the window. Which address counts behind a proxy is TRUST_PROXY
 * (off by default: X-Forwarded-For is ignored). Unknown public keys are cached as unknown for
 * CREDENTIAL_CACHE_SECONDS, so a flood with one made-up key is not a database lookup each.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/platform/config.js';
import { clientAddressKey } from '../src/ratelimit/auth-failures.js';
import { expectProblem } from './support/assertions.js';
import { ADMIN_KEY, backends, useServer, type TestServer } from './support/harness.js';
import { inOneWindow } from './support/minute-window.js';


const unknownKey = (i: number) => ({ 'public-api-key': `pk_unknown_${i}_${Math.random().toString(36).slice(2)}`, 'private-secret-key': 'sk_wrong' });

function customers(t: TestServer, headers: Record<string, string>) {
  return t.fetch('/customers', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ merchant_customer_id: `cus-${Math.random()}` }) });
}

async function expectLimited(res: Response) {
  await expectProblem(res, 429, 'RATE_LIMITED');
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

describe('TRUST_PROXY and AUTH_FAILURES_PER_MINUTE configuration', () => {
  it.each([
    [{}, false],
    [{ TRUST_PROXY: 'false' }, false],
    [{ TRUST_PROXY: '2' }, 2],
    [{ TRUST_PROXY: 'loopback, 10.0.0.0/8,2001:db8::1' }, ['loopback', '10.0.0.0/8', '2001:db8::1']],
    [{ TRUST_PROXY: '99' }, 99],
    [{ TRUST_PROXY: '192.168.1.1,fc00::/7,::ffff:10.0.0.0/104,2001:db8::/32,::1' }, ['192.168.1.1', 'fc00::/7', '::ffff:10.0.0.0/104', '2001:db8::/32', '::1']],
  ])('TRUST_PROXY %j → %j', (env, expected) => {
    expect(loadConfig(env).trustProxy).toEqual(expected);
  });

  it.each([
    'true',
    'proxy.example',
    '10.0.0.0/99',
    '-1',
    // Ranges that trust every peer (or nearly), as `true` would: refused however they are written.
    '::/0,0.0.0.0/0',
    '0.0.0.0/0',
    '::/0',
    'loopback,0.0.0.0/0',
    '0.0.0.0/1',
    '::/1',
    '::/80', // holds ::ffff:0:0/96, every IPv4 client as Express matches it
    '::ffff:0:0/96',
    '::ffff:0.0.0.0/100',
    // Bare numbers that are not a hop count, and IPv4 not in four decimal parts (`100` is 0.0.0.100).
    '100',
    '4294967295',
    '127.1',
    '0x7f000001',
    '10/8',
    '1.2.3.4/33',
  ])('TRUST_PROXY=%s is refused with one line naming it', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/^invalid configuration: TRUST_PROXY must be false, a hop count/);
  });

  it('AUTH_FAILURES_PER_MINUTE defaults to 60; 0 turns it off', () => {
    expect(loadConfig({}).authFailuresPerMinute).toBe(60);
    expect(loadConfig({ AUTH_FAILURES_PER_MINUTE: '0' }).authFailuresPerMinute).toBe(0);
    expect(() => loadConfig({ AUTH_FAILURES_PER_MINUTE: 'many' })).toThrow(/AUTH_FAILURES_PER_MINUTE must be a whole number/);
  });

  it('an IPv6 client counts by its /64, an IPv4-mapped one as IPv4', () => {
    expect(clientAddressKey('2001:db8:1:2::1')).toBe(clientAddressKey('2001:db8:1:2:ffff::9'));
    expect(clientAddressKey('2001:db8:1:2::1')).not.toBe(clientAddressKey('2001:db8:1:3::1'));
    expect(clientAddressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });
});

for (const backend of backends()) {
  describe(`failed authentications behind a trusted proxy on ${backend}`, () => {
    const t = useServer(backend, { env: { AUTH_FAILURES_PER_MINUTE: '5', TRUST_PROXY: 'loopback' } });

    it('past the limit an address gets 429 + Retry-After for any key, even a valid one; other addresses are not affected', async () => {
      const from = (address: string) => ({ 'x-forwarded-for': address });
      // The limited address's answers, judged once they all fell in one window.
      const answers = await inOneWindow(async () => {
        const answers: Response[] = [];
        for (let i = 0; i < 5; i++) answers.push(await customers(t, { ...from('203.0.113.1'), ...unknownKey(i) }));
        answers.push(await customers(t, { ...from('203.0.113.1'), ...unknownKey(5) }));
        // No header at all is a failed authentication too, and a blocked address is refused before any check.
        answers.push(await t.fetch('/webhook-endpoints', { headers: from('203.0.113.1'), credentials_: false }));
        answers.push(await customers(t, from('203.0.113.1'))); // the sandbox's valid key pair
        // The admin API counts too.
        answers.push(
          await t.fetch('/admin/organizations', { method: 'POST', headers: { ...from('203.0.113.1'), 'admin-api-key': 'wrong', 'content-type': 'application/json' }, body: '{"name":"x"}', credentials_: false }),
        );
        return answers;
      });
      for (const res of answers.slice(0, 5)) await expectProblem(res, 401, 'INVALID_CREDENTIALS');
      for (const res of answers.slice(5)) await expectLimited(res);
      // Another address: unaffected, valid and invalid keys answered as usual.
      expect((await customers(t, from('203.0.113.2'))).status).toBe(201);
      await expectProblem(await customers(t, { ...from('203.0.113.2'), ...unknownKey(6) }), 401, 'INVALID_CREDENTIALS');
      // Successful requests never count.
      for (let i = 0; i < 10; i++) expect((await t.fetch('/webhook-endpoints', { headers: from('203.0.113.3') })).status).toBe(200);
    });

    it('an IPv6 client is counted by its /64', async () => {
      const answers = await inOneWindow(async () => {
        const answers: Response[] = [];
        for (let i = 0; i < 5; i++) answers.push(await customers(t, { 'x-forwarded-for': `2001:db8:7:7::${i + 1}`, ...unknownKey(i) }));
        answers.push(await customers(t, { 'x-forwarded-for': '2001:db8:7:7:abcd::1', ...unknownKey(9) }));
        return answers;
      });
      for (const res of answers.slice(0, 5)) await expectProblem(res, 401, 'INVALID_CREDENTIALS');
      await expectLimited(answers[5]!);
      expect((await customers(t, { 'x-forwarded-for': '2001:db8:7:8::1' })).status).toBe(201);
    });
  });

  describe(`failed authentications without a trusted proxy (the default) on ${backend}`, () => {
    const t = useServer(backend, { env: { AUTH_FAILURES_PER_MINUTE: '3' } });

    it('X-Forwarded-For is ignored: the connection\'s address counts', async () => {
      const answers = await inOneWindow(async () => {
        const answers: Response[] = [];
        for (let i = 0; i < 3; i++) answers.push(await customers(t, { 'x-forwarded-for': `198.51.100.${i}`, ...unknownKey(i) }));
        answers.push(await customers(t, { 'x-forwarded-for': '198.51.100.99', ...unknownKey(3) }));
        return answers;
      });
      for (const res of answers.slice(0, 3)) await expectProblem(res, 401, 'INVALID_CREDENTIALS');
      await expectLimited(answers[3]!);
    });
  });

  describe(`unknown public keys on ${backend}`, () => {
    const t = useServer(backend, { env: { AUTH_FAILURES_PER_MINUTE: '0', CREDENTIAL_CACHE_SECONDS: '3' } });

    it('are cached as unknown for CREDENTIAL_CACHE_SECONDS; a key issued through this instance works at once', async () => {
      // A key another instance issues right after it was tried here: refused until the cached "unknown"
      // expires (one lookup per TTL, not one per request), then accepted.
      const publicKey = `pk_later_${Math.random().toString(36).slice(2)}`;
      const headers = { 'public-api-key': publicKey, 'private-secret-key': t.sandbox.private_secret_key };
      await expectProblem(await customers(t, headers), 401, 'INVALID_CREDENTIALS');
      await t.db.query(`INSERT INTO api_keys (public_key, organization_id, secret_sha256) SELECT $1, organization_id, secret_sha256 FROM api_keys WHERE public_key = $2`, [
        publicKey,
        t.sandbox.public_api_key,
      ]);
      const tried = Date.now();
      await expectProblem(await customers(t, headers), 401, 'INVALID_CREDENTIALS');
      expect(Date.now() - tried).toBeLessThan(3_000); // still within the TTL when refused
      await new Promise((r) => setTimeout(r, 3_200 - (Date.now() - tried)));
      expect((await customers(t, headers)).status).toBe(201);

      // Issued through this instance: works on its first request.
      const org = await t.createOrganization();
      expect((await customers(t, { 'public-api-key': org.public_api_key, 'private-secret-key': org.private_secret_key })).status).toBe(201);
      const res = await t.fetch(`/admin/organizations/${org.organization_id}/api-keys`, { method: 'POST', headers: { 'admin-api-key': ADMIN_KEY }, credentials_: false });
      expect(res.status).toBe(201);
      const pair = (await res.json()) as { public_api_key: string; private_secret_key: string };
      t.rememberSecret(pair.private_secret_key);
      expect((await customers(t, { 'public-api-key': pair.public_api_key, 'private-secret-key': pair.private_secret_key })).status).toBe(201);
    });
  });
}
