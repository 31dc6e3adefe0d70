/**
 * verifyWebhook (WebCrypto) against signatures made by the reference `standardwebhooks` package, and
 * signWebhook checked by it in turn.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook, WebhookVerificationError } from '../src/index.js';

const secret = `whsec_${Buffer.from('a-very-secret-key-of-32-bytes!!!').toString('base64')}`;
const reference = new Webhook(secret);
const payload = JSON.stringify({ type: 'payment.succeeded', data: { id: 'pay_1', amount: 150.5, note: 'café ☕' } });

function signed(body = payload, at = new Date(), id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W') {
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': reference.sign(id, at, body) };
}

describe('verifyWebhook', () => {
  it('accepts a signature made by standardwebhooks and returns the parsed body', async () => {
    await expect(verifyWebhook(payload, signed(), secret)).resolves.toEqual(JSON.parse(payload));
  });

  it('accepts a Fetch Headers object, Node-style header arrays, bytes, and a secret without whsec_', async () => {
    const headers = signed();
    await expect(verifyWebhook(payload, new Headers(headers), secret)).resolves.toBeTruthy();
    await expect(verifyWebhook(payload, { ...headers, 'webhook-signature': [headers['webhook-signature']] }, secret)).resolves.toBeTruthy();
    await expect(verifyWebhook(new TextEncoder().encode(payload), headers, secret)).resolves.toBeTruthy();
    await expect(verifyWebhook(payload, headers, secret.slice('whsec_'.length))).resolves.toBeTruthy();
    // header names in another case (a plain object from some frameworks)
    await expect(verifyWebhook(payload, { 'Webhook-Id': headers['webhook-id'], 'Webhook-Timestamp': headers['webhook-timestamp'], 'Webhook-Signature': headers['webhook-signature'] }, secret)).resolves.toBeTruthy();
  });

  it('accepts when any of several signatures matches (secret rotation)', async () => {
    const headers = signed();
    const other = new Webhook(`whsec_${Buffer.from('another-secret-another-secret-!!').toString('base64')}`).sign(headers['webhook-id'], new Date(), payload);
    await expect(verifyWebhook(payload, { ...headers, 'webhook-signature': `${other} ${headers['webhook-signature']}` }, secret)).resolves.toBeTruthy();
  });

  const rejects: [string, () => Parameters<typeof verifyWebhook>, RegExp][] = [
    ['a tampered body', () => [payload.replace('150.5', '1500.5'), signed(), secret], /no matching/],
    ['another secret', () => [payload, signed(), `whsec_${Buffer.from('wrong-secret-wrong-secret-wrong!').toString('base64')}`], /no matching/],
    ['another message id', () => [payload, { ...signed(), 'webhook-id': 'msg_other' }, secret], /no matching/],
    ['a timestamp 6 minutes old', () => [payload, signed(payload, new Date(Date.now() - 6 * 60_000)), secret], /too old/],
    ['a timestamp 6 minutes ahead', () => [payload, signed(payload, new Date(Date.now() + 6 * 60_000)), secret], /too new/],
    ['a changed timestamp', () => [payload, { ...signed(), 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 1) }, secret], /no matching/],
    ['a non-numeric timestamp', () => [payload, { ...signed(), 'webhook-timestamp': 'yesterday' }, secret], /invalid webhook-timestamp/],
    ['an unknown signature version', () => [payload, { ...signed(), 'webhook-signature': signed()['webhook-signature'].replace('v1,', 'v2,') }, secret], /no matching/],
    ['a garbage signature', () => [payload, { ...signed(), 'webhook-signature': 'v1,***' }, secret], /no matching/],
    ['missing headers', () => [payload, { 'webhook-id': 'msg_1' }, secret], /missing/],
  ];
  it.each(rejects)('rejects %s', async (_name, args, message) => {
    const err = await verifyWebhook(...args()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookVerificationError);
    expect((err as Error).message).toMatch(message);
  });

  it('agrees with standardwebhooks on the tolerance edge (5 minutes)', async () => {
    const at = new Date(Date.now() - 4 * 60_000);
    const headers = signed(payload, at);
    expect(reference.verify(payload, headers)).toBeTruthy();
    await expect(verifyWebhook(payload, headers, secret)).resolves.toBeTruthy();
    await expect(verifyWebhook(payload, headers, secret, { now: at.getTime() + 301_000 })).rejects.toThrow(/too old/);
  });

  it('refuses a secret that is not base64 as a usage error', async () => {
    await expect(verifyWebhook(payload, signed(), 'whsec_***not base64***')).rejects.toThrow(TypeError);
  });
});

describe('signWebhook', () => {
  it('produces headers that standardwebhooks verifies', async () => {
    const headers = await signWebhook(payload, secret);
    expect(headers['webhook-id']).toMatch(/^msg_/);
    expect(reference.verify(payload, headers)).toEqual(JSON.parse(payload));
    await expect(verifyWebhook(payload, headers, secret)).resolves.toEqual(JSON.parse(payload));
  });

  it('matches standardwebhooks byte for byte for the same id and time', async () => {
    const at = new Date('2026-11-22T03:04:05Z');
    const ours = await signWebhook(payload, secret, { id: 'msg_fixed', timestamp: at });
    expect(ours['webhook-signature']).toBe(reference.sign('msg_fixed', at, payload));
  });
});
