/**
 * The webhook URL policy, table-driven: every non-global address is refused at registration (the rule
 * and the API) and at delivery (before any connection), IPv4 embedded in IPv6 included; global unicast
 * addresses pass. Nothing here connects anywhere but 127.0.0.1.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { postWebhook } from '../src/webhooks/http-sender.js';
import { addressAllowed, endpointUrlProblem, isNonPublicAddress } from '../src/webhooks/url-policy.js';
import { backends, useServer } from './support/harness.js';

/** [address as it appears in a URL host, why it must be refused] */
const REFUSED: [string, string][] = [
  // The review's findings: IPv4 hidden in IPv6 translation forms, and site-local.
  ['[::169.254.169.254]', 'IPv4-compatible (deprecated) form of the metadata address'],
  ['[::ffff:0:169.254.169.254]', 'SIIT (RFC 6145) form of the metadata address'],
  ['[64:ff9b:1::169.254.169.254]', 'local-use NAT64 (RFC 8215)'],
  ['[2002:a9fe:a9fe::]', '6to4 of 169.254.169.254'],
  ['[fec0::1]', 'site-local (deprecated)'],
  // More of the same kind.
  ['[64:ff9b::a9fe:a9fe]', 'well-known NAT64 prefix (RFC 6052)'],
  ['[64:ff9b::10.0.0.1]', 'NAT64 of a private address'],
  ['[::ffff:169.254.169.254]', 'IPv4-mapped link-local'],
  ['[::ffff:127.0.0.1]', 'IPv4-mapped loopback'],
  ['[::ffff:10.0.0.1]', 'IPv4-mapped private'],
  ['[::127.0.0.1]', 'IPv4-compatible loopback'],
  ['[::8.8.8.8]', 'IPv4-compatible (deprecated, never routed)'],
  ['[2002:7f00:1::]', '6to4 of 127.0.0.1'],
  ['[2002:0808:0808::1]', '6to4 (deprecated relay mechanism, RFC 7526)'],
  ['[2001:0:4136:e378:8000:63bf:3fff:fdd2]', 'Teredo'],
  ['[2001:db8::1]', 'documentation'],
  ['[2001:2::1]', 'benchmarking'],
  ['[3fff::1]', 'documentation (RFC 9637)'],
  ['[100::1]', 'discard-only'],
  ['[fc00::1]', 'unique local'],
  ['[fd12:3456::1]', 'unique local'],
  ['[fe80::1]', 'link-local'],
  ['[ff02::1]', 'multicast'],
  ['[::1]', 'loopback'],
  ['[::]', 'unspecified'],
  ['[4000::1]', 'outside the global unicast space 2000::/3'],
  ['127.0.0.1', 'loopback'],
  ['10.1.2.3', 'private'],
  ['172.16.5.4', 'private'],
  ['192.168.0.1', 'private'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['0.0.0.0', 'unspecified'],
  ['192.0.0.8', 'IETF protocol assignments'],
  ['192.0.2.1', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
];

const ALLOWED = ['8.8.8.8', '203.0.114.9', '1.1.1.1', '[2606:4700:4700::1111]', '[2a00:1450:4001:80e::200e]', '[::ffff:8.8.8.8]'];

describe('webhook URL policy', () => {
  it.each(REFUSED)('refuses %s (%s) at registration and at delivery', async (host) => {
    const bare = host.replace(/^\[|\]$/g, '');
    expect(isNonPublicAddress(bare)).toBe(true);
    expect(addressAllowed(bare, false)).toBe(false);
    expect(endpointUrlProblem(`https://${host}/hooks`, false)).toBe('must be a public address');
    // Delivery refuses before connecting (nothing listens on these; a connection attempt would time out or be refused).
    expect(await postWebhook(`https://${host}:9/hooks`, '{}', {}, { timeoutMs: 2_000, allowLoopback: false })).toMatchObject({
      ok: false,
      statusCode: null,
      error: 'the endpoint address is not allowed',
    });
  });

  it.each(ALLOWED)('accepts the global unicast address %s', (host) => {
    expect(isNonPublicAddress(host.replace(/^\[|\]$/g, ''))).toBe(false);
    expect(endpointUrlProblem(`https://${host}/hooks`, false)).toBeUndefined();
  });

  it('sandbox mode admits loopback (also IPv4-mapped), never any other non-global address', () => {
    for (const host of ['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', 'localhost']) expect(endpointUrlProblem(`http://${host}:8080/h`, true), host).toBeUndefined();
    for (const [host] of REFUSED.filter(([h]) => !['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]'].includes(h))) {
      expect(endpointUrlProblem(`https://${host}/h`, true), host).toBeDefined();
    }
  });
});

describe('loopback in sandbox mode: registration and sending agree', () => {
  it('every loopback URL sandbox mode registers is one a delivery reaches (localhost names included), and production refuses them all', async () => {
    const received: string[] = [];
    const server = createServer((req, res) => {
      received.push(req.headers.host ?? '');
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      for (const host of ['127.0.0.1', 'localhost', 'LOCALHOST', 'hooks.localhost', 'a.b.localhost']) {
        const url = `http://${host}:${port}/h`;
        expect(endpointUrlProblem(url, true), url).toBeUndefined();
        expect(endpointUrlProblem(url, false), url).toBeDefined();
        const before = received.length;
        expect(await postWebhook(url, '{}', {}, { timeoutMs: 2_000, allowLoopback: true }), url).toMatchObject({ ok: true, statusCode: 204 });
        expect(received.length, url).toBe(before + 1);
        // Outside sandbox mode the sender refuses it too, before connecting.
        expect((await postWebhook(url, '{}', {}, { timeoutMs: 2_000, allowLoopback: false })).ok, url).toBe(false);
        expect(received.length, url).toBe(before + 1);
      }
      // Neither registers nor sends to a name that only looks local.
      expect(endpointUrlProblem(`http://localhost.example.com:${port}/h`, true)).toBeDefined();
      expect(await postWebhook(`http://localhost.example.com:${port}/h`, '{}', {}, { timeoutMs: 2_000, allowLoopback: true })).toMatchObject({ ok: false, error: 'the endpoint address is not allowed' });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

for (const backend of backends()) {
  describe(`webhook endpoint registration on ${backend}`, () => {
    const t = useServer(backend);

    it('every refused address answers 400 naming /body/url and stores nothing, on create and on update', async () => {
      const json = { 'content-type': 'application/json' };
      const ok = await t.fetch('/webhook-endpoints', { method: 'POST', headers: json, body: JSON.stringify({ url: 'https://merchant.example.com/hooks', events: ['*'] }) });
      expect(ok.status).toBe(201);
      const { id } = (await ok.json()) as { id: string };
      // Sandbox mode (this server) admits loopback receivers, so loopback forms are left out here.
      for (const [host] of REFUSED.filter(([h]) => !['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]'].includes(h))) {
        const url = `https://${host}/hooks`;
        const created = await t.fetch('/webhook-endpoints', { method: 'POST', headers: json, body: JSON.stringify({ url, events: ['*'] }) });
        expect(created.status, url).toBe(400);
        expect(((await created.json()) as { errors: { path: string }[] }).errors.map((e) => e.path), url).toEqual(['/body/url']);
        const updated = await t.fetch(`/webhook-endpoints/${id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ url }) });
        expect(updated.status, url).toBe(400);
      }
      const rows = await t.db.query<{ url: string }>('SELECT url FROM webhook_endpoints');
      expect(rows).toEqual([{ url: 'https://merchant.example.com/hooks' }]);
    });
  });
}
