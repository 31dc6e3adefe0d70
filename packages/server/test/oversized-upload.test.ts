/**
 * An upload over the route's limit always gets a readable 413 (issue 12, item 2). The server answers
 * at once with `Connection: close` and then keeps reading and discarding the rest of the upload for a
 * bounded time and size (a lingering close): had it closed at once, the client, still writing, would
 * get a reset (EPIPE/ECONNRESET) and never see the answer.
 */
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { LINGER_MAX_BYTES, LINGER_MAX_MS } from '../src/http/lingering-close.js';
import { backends, useServer } from './support/harness.js';

const MB = 1024 * 1024;
const run = promisify(execFile);
const client = fileURLToPath(new URL('./support/upload-client.mjs', import.meta.url));

for (const backend of backends()) {
  describe(`oversized uploads on ${backend}`, () => {
    const t = useServer(backend);

    it.each(['declared', 'chunked'])('20 sequential 20 MB uploads through fetch (%s) → 20 × 413 problem+json, then still serving', async (framing) => {
      const { stdout } = await run(process.execPath, [client, `${t.baseUrl}/customers`, t.sandbox.public_api_key, t.sandbox.private_secret_key, '20', framing]);
      expect(JSON.parse(stdout)).toEqual(Array(20).fill('413 application/problem+json PAYLOAD_TOO_LARGE'));
      expect((await fetch(`${t.running.url}/healthz`)).status).toBe(200);
      const created = await t.fetch('/customers', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ merchant_customer_id: `cus-after-${framing}-uploads` }),
      });
      expect(created.status).toBe(201);
    }, 120_000);

    it('an answer before the body is read says Connection: close; a client that never stops sending is cut off after a bounded time and size', async () => {
      const { hostname, port } = new URL(t.running.url);
      const auth = `public-api-key: ${t.sandbox.public_api_key}\r\nprivate-secret-key: ${t.sandbox.private_secret_key}\r\n`;
      const cases = [
        { head: `POST /v1/customers HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100000000000\r\n${auth}\r\n`, status: 413, code: 'PAYLOAD_TOO_LARGE' },
        { head: `POST /v1/customers HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n${auth}\r\n`, status: 413, code: 'PAYLOAD_TOO_LARGE' },
        // Refused before the body for another reason: the rest of it is not read either.
        { head: `POST /v1/customers HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100000000000\r\n\r\n`, status: 401, code: 'INVALID_CREDENTIALS' },
        { head: `POST /v1/no-such-route HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n${auth}\r\n`, status: 404, code: 'NOT_FOUND' },
        // A trickle that never ends is cut off by the time cap.
        { head: `POST /v1/customers HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100000000000\r\n${auth}\r\n`, status: 413, code: 'PAYLOAD_TOO_LARGE', trickle: true },
      ];
      for (const { head, status, code, trickle = false } of cases) {
        const chunked = head.includes('chunked');
        const piece = Buffer.alloc(trickle ? 16 : 64 * 1024, 0x20);
        const frame = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
        const rssBefore = process.memoryUsage().rss;
        const started = Date.now();
        const outcome = await new Promise<{ answer: string; written: number; closedAfterMs: number }>((resolve, reject) => {
          // Half-open allowed: the server's FIN does not make this client stop sending.
          const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
          let answer = '';
          let written = 0;
          socket.on('data', (d) => (answer += d.toString()));
          socket.on('error', () => {}); // the server cuts us off in the end: that is the point
          socket.on('close', () => resolve({ answer, written, closedAfterMs: Date.now() - started }));
          socket.once('connect', async () => {
            socket.write(head);
            // Keep sending whatever the server says, as a broken or hostile client would.
            while (!socket.destroyed && socket.writable) {
              written += frame.length;
              if (!socket.write(frame)) await new Promise((r) => socket.once('drain', r).once('close', r));
              if (trickle) await new Promise((r) => setTimeout(r, 100));
            }
          });
          setTimeout(() => reject(new Error('the server never closed the connection')), LINGER_MAX_MS + 20_000).unref();
        });
        expect(outcome.answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
        expect(outcome.answer).toMatch(/\r\nconnection: close\r\n/i);
        expect(outcome.answer).toContain(`"${code}"`);
        // What the server read after its answer is capped (the kernel buffers add a few MB in between).
        expect(outcome.written).toBeLessThan(LINGER_MAX_BYTES + 16 * MB);
        expect(outcome.closedAfterMs).toBeLessThan(LINGER_MAX_MS + 10_000);
        if (trickle) expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(LINGER_MAX_MS - 100); // it did linger
        // Discarded, not buffered.
        expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * MB);
      }
      expect((await fetch(`${t.running.url}/healthz`)).status).toBe(200);
    }, 90_000);
  });
}
