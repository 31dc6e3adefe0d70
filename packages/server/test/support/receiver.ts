/** A webhook receiver on loopback that records every JSON body it is sent and answers 204. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Receiver<T> {
  url: string;
  received: T[];
  /** Waits until `count` bodies arrived (or the deadline passed). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): void;
}

export async function startReceiver<T>(): Promise<Receiver<T>> {
  const received: T[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push(JSON.parse(body) as T);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    async waitFor(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    },
    close: () => server.close(),
  };
}
