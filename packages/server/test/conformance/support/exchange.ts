/**
 * One HTTP exchange with the server, checked against the spec, and the record of which statuses each
 * operation answered (for the coverage table).
 *
 * Every response sent through `send` must be documented for its operation (status), carry every header
 * its spec marks `required` (X-Request-Id always, ETag on getPayment, Retry-After on 429/503), no header
 * the spec does not declare for it (besides HTTP's own and the security headers, protocol-headers.ts),
 * header values matching their schemas, and a body of a documented media type that matches its schema. That includes problems from the error path (sendProblem), which the server's
 * own response validator skips on purpose. A 501 NOT_IMPLEMENTED is recorded, and fails only in strict
 * mode; any other 5xx fails.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { KNOWN_DEVIATIONS, STRICT, type Deviation } from '../config.js';
import { expectSchema } from '../../support/assertions.js';
import { isProtocolHeader } from './protocol-headers.js';
import { BASE_PATH, componentName, errorsText, validatorFor, type SpecOperation } from './spec-model.js';

export class Recorder {
  /** operationId → statuses answered */
  readonly statuses = new Map<string, Set<number>>();
  readonly notImplemented = new Set<string>();
  /** operationId → why its example replay could not run (a fixture it needs is not implemented) */
  readonly blocked = new Map<string, string>();
  /** operationId → example replays that got their documented status */
  readonly replayed = new Map<string, string[]>();
  /** Known deviations (config.ts) this run met, with one example each. */
  readonly deviations = new Map<Deviation, string>();

  hit(operationId: string, status: number): void {
    let set = this.statuses.get(operationId);
    if (!set) this.statuses.set(operationId, (set = new Set()));
    set.add(status);
  }
}

/** Where requests go, and with which credentials. */
export interface Target {
  baseUrl: string;
  merchant: { public_api_key: string; private_secret_key: string };
  adminKey: string;
  /** The server's RATE_LIMIT_PER_MINUTE when on: every authenticated merchant response then carries RateLimit-*. */
  rateLimit?: number;
  /** Standard Webhooks headers for a raw body, signed with the sandbox provider's secret. */
  sign?: (rawBody: string) => Promise<Record<string, string>>;
  recorder: Recorder;
}

export interface Req {
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** JSON-encoded and sent as application/json. */
  body?: unknown;
  /** Sent exactly as given (with contentType). */
  rawBody?: string | Buffer;
  /** Default application/json when there is a body; null sends no Content-Type. */
  contentType?: string | null;
  /** 'default': the operation's own credentials (and a valid signature for signed operations). */
  auth?: 'default' | 'none' | Record<string, string>;
  /** Default: a fresh key for keyed operations; null: leave the header out. */
  idempotencyKey?: string | null;
}

export interface Exchange {
  op: SpecOperation;
  path: string;
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
  notImplemented: boolean;
  idempotencyKey?: string;
  rawBody?: string | Buffer;
}

/** RFC 3986 percent-encoding of everything but unreserved characters (encodeURIComponent leaves !'()*). */
const strictEncode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The known deviation (config.ts) this exchange is an instance of, if any; recorded when found. */
export function knownDeviation(recorder: Recorder, ex: Exchange, kind: Deviation['kind']): Deviation | undefined {
  const paths = ((ex.body as { errors?: { path?: string }[] } | undefined)?.errors ?? []).map((e) => e.path ?? '');
  const found = KNOWN_DEVIATIONS.find(
    (d) =>
      d.kind === kind &&
      d.operationId === ex.op.operationId &&
      d.status === ex.status &&
      (d.at === undefined || [d.at].flat().some((at) => paths.some((p) => p === at || p.startsWith(`${at}/`)))),
  );
  if (found && !recorder.deviations.has(found)) recorder.deviations.set(found, `${ex.op.method} ${ex.path}: ${ex.text.slice(0, 160)}`);
  return found;
}

let keyCounter = 0;
/** A never-reused idempotency key. */
export const freshKey = (): string => `conf-${process.pid}-${++keyCounter}-${randomUUID().slice(0, 8)}`;

export function pathOf(op: SpecOperation, params: Record<string, string> = {}): string {
  return op.template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${op.operationId}: no value for path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

export async function send(target: Target, op: SpecOperation, req: Req = {}): Promise<Exchange> {
  const path = `${BASE_PATH}${pathOf(op, req.params)}`;
  const query = req.query && Object.keys(req.query).length > 0 ? `?${Object.entries(req.query).map(([k, v]) => `${strictEncode(k)}=${strictEncode(v)}`).join('&')}` : '';
  const headers = new Headers(req.headers);
  const rawBody = req.rawBody ?? (req.body !== undefined ? JSON.stringify(req.body) : undefined);
  const contentType = req.contentType === undefined ? (rawBody !== undefined ? 'application/json' : null) : req.contentType;
  if (contentType !== null && rawBody !== undefined) headers.set('content-type', contentType);

  const auth = req.auth ?? 'default';
  if (auth === 'default') {
    if (op.security === 'merchant') {
      headers.set('public-api-key', target.merchant.public_api_key);
      headers.set('private-secret-key', target.merchant.private_secret_key);
    } else if (op.security === 'public') {
      // A shopper's browser: the public key alone.
      headers.set('public-api-key', target.merchant.public_api_key);
    } else if (op.security === 'admin') {
      headers.set('admin-api-key', target.adminKey);
    }
    if (op.signed && target.sign && !headers.has('webhook-signature')) {
      for (const [k, v] of Object.entries(await target.sign(typeof rawBody === 'string' ? rawBody : (rawBody?.toString('utf8') ?? '')))) headers.set(k, v);
    }
  } else if (auth !== 'none') {
    for (const [k, v] of Object.entries(auth)) headers.set(k, v);
  }
  let idempotencyKey: string | undefined;
  if (op.idempotent && req.idempotencyKey !== null && !headers.has('x-idempotency-key')) {
    idempotencyKey = req.idempotencyKey ?? freshKey();
    headers.set('x-idempotency-key', idempotencyKey);
  }

  const res = await fetch(new URL(`${path}${query}`, target.baseUrl).toString(), { method: op.method, headers, body: typeof rawBody === 'string' || rawBody === undefined ? rawBody : new Uint8Array(rawBody) });
  const text = await res.text();
  const ex: Exchange = { op, path, status: res.status, headers: res.headers, text, body: undefined, notImplemented: false, idempotencyKey, rawBody };
  target.recorder.hit(op.operationId, res.status);
  checkConformance(target.recorder, ex);
  if (target.rateLimit && (op.security === 'merchant' || op.security === 'public') && auth === 'default' && ex.status !== 401) {
    expect(res.headers.get('ratelimit-limit'), `${op.operationId} → ${ex.status}: RateLimit-Limit`).toBe(String(target.rateLimit));
  }
  return ex;
}

const LEAK = /\bat .+\.(ts|js):\d+|SELECT |INSERT |UPDATE |node_modules/;

/** The exchange against the spec (see the file comment). Throws (vitest expect) on any mismatch. */
export function checkConformance(recorder: Recorder, ex: Exchange): void {
  const { op, status, headers, text } = ex;
  const what = `${op.operationId} ${op.method} ${ex.path} → ${status}`;
  const requestId = headers.get('x-request-id');
  expect(requestId, `${what}: X-Request-Id on every response`).toBeTruthy();
  expect(requestId!.length, `${what}: X-Request-Id maxLength`).toBeLessThanOrEqual(128);
  const mediaType = (headers.get('content-type') ?? '').split(';')[0]!.trim();

  if (status === 501) {
    expect(mediaType, `${what}: ${text}`).toBe('application/problem+json');
    ex.body = JSON.parse(text) as unknown;
    expect((ex.body as { code?: string }).code, `${what}: ${text}`).toBe('NOT_IMPLEMENTED');
    expectSchema('Problem', ex.body);
    recorder.notImplemented.add(op.operationId);
    ex.notImplemented = true;
    if (STRICT) expect.fail(`${op.operationId} is not implemented (501) — STRICT_COVERAGE is on`);
    return;
  }

  let documented = op.responses.get(status);
  if (!documented && mediaType === 'application/problem+json') {
    ex.body = JSON.parse(text) as unknown;
    const deviation = knownDeviation(recorder, ex, 'undocumented-status');
    // A known deviation is checked as the problem it is, with the headers of the operation's 400
    // (report-only); strict mode fails on it.
    if (deviation && !STRICT) documented = { status, content: { 'application/problem+json': { $ref: '#/components/schemas/Problem' } }, headers: op.responses.get(400)?.headers ?? {} };
  }
  expect(documented, `${what}: status ${status} is not documented for ${op.operationId}: ${text.slice(0, 500)}`).toBeDefined();
  const doc = documented!;

  // Headers: the required ones are there, every one sent is declared, values match their schemas.
  for (const [name, { required, schema }] of Object.entries(doc.headers)) {
    const value = headers.get(name);
    if (required) expect(value, `${what}: required header ${name}`).not.toBeNull();
    if (value === null) continue;
    const typed = schema.type === 'integer' || schema.type === 'number' ? Number(value) : value;
    const v = validatorFor(schema);
    expect(v(typed), `${what}: header ${name}: ${JSON.stringify(value)} ${errorsText(v)}`).toBe(true);
  }
  const undeclared = [...headers.keys()].filter((name) => !(name in doc.headers) && !isProtocolHeader(name));
  expect(undeclared, `${what}: headers the spec does not declare for this response`).toEqual([]);
  if (headers.get('idempotent-replayed') !== null) {
    expect(op.idempotent, `${what}: Idempotent-Replayed on an operation without X-Idempotency-Key`).toBe(true);
  }

  // Body
  const media = Object.keys(doc.content);
  if (media.length === 0) {
    expect(text, `${what}: no body is documented`).toBe('');
    return;
  }
  expect(media, `${what}: Content-Type ${mediaType} is not documented (${media.join(', ')})`).toContain(mediaType);
  let body: unknown;
  if (mediaType === 'text/plain') {
    // Text as is (a provider's notification acknowledgement), checked against its string schema.
    body = text;
  } else {
    try {
      body = JSON.parse(text);
    } catch {
      expect.fail(`${what}: the body is not JSON: ${text.slice(0, 200)}`);
    }
  }
  ex.body = body;
  const schema = doc.content[mediaType];
  if (schema) {
    const name = componentName(schema);
    if (name) expectSchema(name, body);
    else {
      const v = validatorFor(schema);
      expect(v(body), `${what}: ${errorsText(v)}`).toBe(true);
    }
  }
  if (mediaType === 'application/problem+json') {
    const problem = body as { status?: number; request_id?: string; instance?: string; code?: string };
    expect(problem.status, `${what}: problem.status`).toBe(status);
    expect(problem.request_id, `${what}: problem.request_id = X-Request-Id`).toBe(requestId);
    expect(problem.instance, `${what}: problem.instance`).toBe(ex.path);
    expect(text, `${what}: nothing internal leaks`).not.toMatch(LEAK);
    if (status === 429 || status === 503 || problem.code === 'REQUEST_IN_PROCESS') {
      expect(headers.get('retry-after') ?? '(none)', `${what}: Retry-After`).toMatch(/^\d+$/);
    }
  }
}

/** Fails on a 5xx other than a (report-only) 501. */
export function expectNoServerError(ex: Exchange): void {
  if (ex.notImplemented) return;
  expect(ex.status, `${ex.op.operationId} ${ex.op.method} ${ex.path} answered ${ex.status}: ${ex.text.slice(0, 500)}`).toBeLessThan(500);
}

/** Asserts a problem with this status and code (a 501 passes in report-only mode). */
export function expectProblemExchange(ex: Exchange, status: number, code?: string): void {
  if (ex.notImplemented) return;
  const what = `${ex.op.operationId} ${ex.op.method} ${ex.path}`;
  expect(ex.status, `${what}: ${ex.text.slice(0, 500)}`).toBe(status);
  expect(ex.headers.get('content-type') ?? '', what).toMatch(/^application\/problem\+json/);
  if (code) expect((ex.body as { code?: string }).code, `${what}: ${ex.text.slice(0, 300)}`).toBe(code);
}
