/** A local HTTP endpoint that records the webhooks the server POSTs to it (raw body and headers). */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export async function startReceiver() {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
      waiters.splice(0).forEach((w) => w());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** Resolves with the n-th (1-based) request once it arrived, or undefined after `timeoutMs`. */
    async nth(n: number, timeoutMs: number): Promise<Received | undefined> {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n && Date.now() < deadline) {
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, Math.max(0, deadline - Date.now()));
        });
      }
      return received[n - 1];
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
