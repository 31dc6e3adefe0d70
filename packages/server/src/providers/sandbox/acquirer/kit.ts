/**
 * What both sandbox acquirers share: a plain node:http server on loopback, a ledger (ledger.ts) keyed by
 * the caller's idempotency reference (a repeated reference gets the first answer, never a second entry; a
 * reference looked up before it arrived is tombstoned and refused later), answers held back (test card
 * …0085 at A, the 'silent' fault), and the control surface under /_sandbox/ (ledger, faults).
 * Faults (PUT /_sandbox/faults, on operations; on lookups only with `lookups: true`):
 *   error       HTTP 500, nothing processed
 *   silent      processed and recorded, never answered (held until the client gives up)
 *   refuse      the socket is destroyed, nothing processed
 *   oversized   processed and recorded, answered with a JSON body of `bytes` bytes (default 150 MB),
 *               streamed as the client reads it (chunked, or with Content-Length when `lengthHeader`)
 *   drip        processed and recorded, answered one byte every `intervalMs` (default 200), never finished
 *   odd_values  processed and recorded as `status` (default ERROR), every code, message and reference of
 *               the answer random: `length` (default 80) characters of letters, punctuation, control and
 *               invisible characters, emoji, a lone surrogate, a card number or a key (AcquirerDefinition.garble)
 * GET /_sandbox/faults also shows `stats.oversized_bytes_sent`: what the last oversized answers wrote.
 * `lookups: true` makes lookups (GET) fail too (a silent lookup is held unanswered), and `caller` limits
 * the faults to one caller (A's API key, B's merchant account): one merchant's connection misbehaves,
 * every other one is answered as usual.
 * The ledger lives where the caller says (`ledgers`): the service's database when the service runs the
 * acquirers (it outlives a restart), this process's memory otherwise. Faults and held answers are this
 * process's only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { memoryLedgers, type Ledger, type LedgerStatus, type LedgerStore } from './ledger.js';

export type { Earlier, FailsOn, FollowUpTarget, Ledger, LedgerEntry, LedgerStatus, LedgerStore, OperationKind, Recorded } from './ledger.js';

export interface Reply {
  status: number;
  body: Record<string, unknown>;
  held?: boolean;
  /** The reference this request recorded a new line under (not a replay): what the odd_values fault rewrites. */
  recorded?: string;
}

export const FAULT_MODES = ['error', 'silent', 'refuse', 'oversized', 'drip', 'odd_values'] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export interface Faults {
  failRate: number;
  mode: FaultMode;
  next: () => number;
  /** oversized: the answer's size in bytes. */
  bytes: number;
  /** oversized: declare the size (Content-Length) instead of streaming it chunked. */
  lengthHeader: boolean;
  /** drip: the pause between two bytes. */
  intervalMs: number;
  /** odd_values: the status the operation is recorded and answered with, and the length of each odd value. */
  status: LedgerStatus;
  length: number;
  /** odd_values: the random source of the odd values. */
  odd: OddValues;
  /** Lookups (GET) fail too; a silent lookup is held unanswered (and looks nothing up: no tombstone). */
  lookups: boolean;
  /** Only this caller's requests fail (AcquirerDefinition.callerOf); undefined: everyone's. */
  caller: string | undefined;
}

/** Random values no provider should send, for the odd_values fault. */
export interface OddValues {
  text(length: number): string;
}

/** The longest an answer is held: long past any connection timeout, short enough to end on its own. */
export const HOLD_MS = 30_000;
const MAX_BODY = 64 * 1024;

export interface AcquirerRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (POST/PUT), or undefined. */
  body: unknown;
}

export interface AcquirerDefinition {
  /** The provider id the acquirer stands for (SANDBOX_A, SANDBOX_B): its ledger's name. */
  name: 'SANDBOX_A' | 'SANDBOX_B';
  /** Checks the caller's credentials (the Authorization header); false → 401. */
  authenticate(headers: IncomingMessage['headers']): boolean;
  /** Who calls (an authenticated request's account or key), for faults limited to one caller. */
  callerOf(headers: IncomingMessage['headers']): string | undefined;
  /** The acquirer's protocol; undefined → 404. */
  handle(req: AcquirerRequest, ledger: Ledger): Promise<Reply | undefined>;
  /**
   * The odd_values fault: rewrites an operation's first answer (a 200 just recorded) in this acquirer's
   * protocol with `status` and odd codes, messages and references (the kit then records it on the line).
   */
  garble(reply: Reply, status: LedgerStatus, odd: (length?: number) => string): void;
}

export interface RunningAcquirer {
  url: string;
  ledger: Ledger;
  close(): Promise<void>;
}

export interface AcquirerOptions {
  port?: number;
  /** Where the ledger lives (sql-ledger.ts: the service's database); this process's memory by default. */
  ledgers?: LedgerStore;
}

export async function startAcquirer(def: AcquirerDefinition, options: AcquirerOptions = {}): Promise<RunningAcquirer> {
  const ledger = (options.ledgers ?? memoryLedgers()).ledger(def.name);
  let faults: Faults | undefined;
  let oversizedBytesSent = 0;
  /** Lookups a silent fault holds: answered by nobody, cut when the faults change (so a test can end them). */
  const heldLookups = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    void serve(req, res).catch(() => {
      if (!res.headersSent) send(res, { status: 500, body: { error: 'INTERNAL' } });
      else res.destroy();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://acquirer');
    let body: unknown;
    if (req.method === 'POST' || req.method === 'PUT') {
      const raw = await readBody(req);
      if (raw === undefined) return send(res, { status: 413, body: { error: 'BODY_TOO_LARGE' } });
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw);
        } catch {
          return send(res, { status: 400, body: { error: 'MALFORMED_JSON' } });
        }
      }
    }
    if (url.pathname.startsWith('/_sandbox/')) {
      const control = await controlSurface(req.method ?? 'GET', url.pathname, body);
      return send(res, control ?? { status: 404, body: { error: 'NOT_FOUND' } });
    }
    if (!def.authenticate(req.headers)) return send(res, { status: 401, body: { error: 'UNAUTHORIZED' } });

    // Faults apply to operations (POST); to lookups (GET) only when asked: reconciliation can otherwise always ask what happened.
    const fault =
      faults !== undefined &&
      faults.failRate > 0 &&
      (req.method === 'POST' || (req.method === 'GET' && faults.lookups)) &&
      (faults.caller === undefined || faults.caller === def.callerOf(req.headers)) &&
      faults.next() < faults.failRate
        ? faults
        : undefined;
    if (fault?.mode === 'refuse') {
      req.socket.destroy();
      return;
    }
    if (fault?.mode === 'error') return send(res, { status: 500, body: { error: 'INTERNAL', message: 'sandbox fault' } });
    if (fault && req.method === 'GET') {
      // A faulted lookup is held unanswered whatever the mode (nothing is looked up: no tombstone).
      heldLookups.add(res);
      res.on('close', () => heldLookups.delete(res));
      return hold(res, () => res.destroy());
    }
    // The other faults: processed and recorded first, then answered their way.
    const reply = (await def.handle({ method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body }, ledger)) ?? {
      status: 404,
      body: { error: 'NOT_FOUND' },
    };
    if (fault?.mode === 'silent') return hold(res, () => res.destroy());
    if (fault?.mode === 'oversized') return streamOversized(res, fault, (n) => (oversizedBytesSent += n));
    if (fault?.mode === 'drip') return drip(res, fault.intervalMs);
    if (fault?.mode === 'odd_values' && reply.recorded !== undefined && reply.status === 200) {
      def.garble(reply, fault.status, (length = fault.length) => fault.odd.text(length));
      await ledger.rewrite(reply.recorded, fault.status, reply.body);
    }
    if (reply.held) return hold(res, () => send(res, reply));
    send(res, reply);
  }

  async function controlSurface(method: string, path: string, body: unknown): Promise<Reply | undefined> {
    if (path === '/_sandbox/ledger' && method === 'GET') return { status: 200, body: { operations: await ledger.entries() } };
    if (path === '/_sandbox/ledger' && method === 'DELETE') {
      await ledger.clear();
      return { status: 204, body: {} };
    }
    if (path === '/_sandbox/faults' && method === 'GET') {
      return { status: 200, body: { faults: faults ? view(faults) : null, stats: { oversized_bytes_sent: oversizedBytesSent } } };
    }
    if (path === '/_sandbox/faults' && method === 'DELETE') {
      faults = undefined;
      oversizedBytesSent = 0;
      releaseHeldLookups();
      return { status: 204, body: {} };
    }
    if (path === '/_sandbox/faults' && method === 'PUT') {
      const parsed = parseFaults(body);
      if (!parsed) {
        return {
          status: 400,
          body: {
            error: 'INVALID_FAULTS',
            message: `failRate 0..1 and mode ${FAULT_MODES.map((m) => `'${m}'`).join(' | ')}; optional seed (integer), bytes (1..1e9), lengthHeader, intervalMs (1..60000), status (APPROVED | DECLINED | ERROR), length (1..10000), lookups (true | false), caller (a string)`,
          },
        };
      }
      faults = parsed;
      oversizedBytesSent = 0;
      releaseHeldLookups();
      return { status: 200, body: { faults: view(parsed) } };
    }
    return undefined;
  }

  function releaseHeldLookups(): void {
    for (const res of heldLookups) res.destroy();
    heldLookups.clear();
  }

  // Longer than the client's keep-alive (undici: 4 s): the client always retires an idle socket first,
  // so a request never lands on a socket the acquirer is closing (that would look like a cut call).
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  // Never what keeps a process alive (the service closes it; acquirers-main keeps its own handle).
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ledger,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function parseFaults(body: unknown): Faults | undefined {
  const f = (body ?? {}) as Record<string, unknown>;
  const int = (v: unknown, min: number, max: number, fallback: number) => (v === undefined ? fallback : typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : NaN);
  const failRate = f.failRate;
  const mode = f.mode as FaultMode;
  if (typeof failRate !== 'number' || !(failRate >= 0 && failRate <= 1) || !FAULT_MODES.includes(mode)) return undefined;
  const seed = typeof f.seed === 'number' && Number.isInteger(f.seed) ? f.seed : undefined;
  const bytes = int(f.bytes, 1, 1e9, 150 * 1024 * 1024);
  const intervalMs = int(f.intervalMs, 1, 60_000, 200);
  const length = int(f.length, 1, 10_000, 80);
  const status = (f.status ?? 'ERROR') as LedgerStatus;
  if ([bytes, intervalMs, length].some(Number.isNaN) || !['APPROVED', 'DECLINED', 'ERROR'].includes(status)) return undefined;
  if (f.lengthHeader !== undefined && typeof f.lengthHeader !== 'boolean') return undefined;
  const lookups = f.lookups ?? false;
  const caller = f.caller;
  if (typeof lookups !== 'boolean' || (caller !== undefined && (typeof caller !== 'string' || caller.length < 1 || caller.length > 200))) return undefined;
  const next = seed === undefined ? Math.random : seeded(seed);
  return {
    failRate, mode, next, bytes, lengthHeader: f.lengthHeader === true, intervalMs, status, length,
    odd: oddValues(seed === undefined ? Math.random : seeded(seed + 1)), lookups, caller,
  };
}

const view = (f: Faults) => ({ failRate: f.failRate, mode: f.mode, lookups: f.lookups, ...(f.caller === undefined ? {} : { caller: f.caller }) });

/**
 * A JSON object of exactly `bytes` bytes ({"padding":"xxx…"}), written as the client reads it: the next
 * chunk only once the socket drained the last, so a client that stops reading stops the transfer.
 */
function streamOversized(res: ServerResponse, fault: Faults, count: (bytes: number) => void): void {
  const head = '{"padding":"';
  const tail = '"}';
  const total = Math.max(fault.bytes, head.length + tail.length);
  res.writeHead(200, { 'content-type': 'application/json', ...(fault.lengthHeader ? { 'content-length': total } : {}) });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let left = total - head.length - tail.length;
  const write = (data: Buffer | string) => {
    count(Buffer.byteLength(data));
    return res.write(data);
  };
  write(head);
  const pump = () => {
    while (left > 0 && !res.destroyed) {
      const n = Math.min(left, chunk.length);
      left -= n;
      if (!write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end(tail);
  };
  res.on('error', () => {});
  pump();
}

/** Headers at once, then one byte every `intervalMs`: never a complete answer (ended after HOLD_MS). */
function drip(res: ServerResponse, intervalMs: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{');
  const timer = setInterval(() => {
    if (!res.destroyed) res.write(' ');
  }, intervalMs);
  const stop = setTimeout(() => res.destroy(), HOLD_MS);
  res.on('close', () => {
    clearInterval(timer);
    clearTimeout(stop);
  });
  res.on('error', () => {});
}

/** Characters no code should hold: controls, NUL, bidi overrides, zero-width, quotes and markup, emoji, a lone surrogate. */
const ODD_PIECES = [
  'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  'abcdefghijklmnopqrstuvwxyz0123456789',
  ' "\\\'<>&;/{}[]%$#@!*?',
  '\u0000\u0007\u001b\n\r\t\u007f',
  '\u202e\u200b\u2066\ufeff',
  'çãéßøΩЖ中文日本語',
];
const ODD_EXTRAS = ['😀', '🏳️‍🌈', '\ud800', ' 4111 1111 1111 1111 ', ' sk_live_51HkQeWxyz0123456789abcd ', ' Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl '];

function oddValues(random: () => number): OddValues {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  return {
    text(length) {
      let out = '';
      while (out.length < length) out += random() < 0.08 ? pick(ODD_EXTRAS) : pick([...pick(ODD_PIECES)]);
      return out.slice(0, length);
    },
  };
}

/** Holds the answer until the client gives up (its socket closes) or HOLD_MS pass, then runs `late`. */
function hold(res: ServerResponse, late: () => void): void {
  const timer = setTimeout(late, HOLD_MS);
  res.on('close', () => clearTimeout(timer));
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.destroyed || res.headersSent) return;
  const text = reply.status === 204 ? '' : JSON.stringify(reply.body);
  res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** mulberry32: a seeded fault sequence makes a bench run repeatable. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
