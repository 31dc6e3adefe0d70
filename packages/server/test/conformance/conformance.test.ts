/**
 * Contract conformance: the spec is the truth, checked against a live server on a real database.
 *
 *   example replay     every request example of the spec, with fixtures that make its ids real, gets
 *                      its documented 2xx and a body matching the response schema; keyed operations
 *                      replay with Idempotent-Replayed and refuse a reused key (422); ETag gives 304;
 *                      a stale If-Match gives 412.
 *   targeted statuses  401, 403, 404, 413, 415 per operation; 429 and the admin switch on a second server;
 *                      429 for failed authentications on a third.
 *   fuzzing            fast-check, seeded and bounded (FUZZ_SEED, FUZZ_RUNS): valid requests never get
 *                      400 or 5xx; schema violations get 400 naming the field; request-level mistakes
 *                      get their 4xx problem.
 *   handler coverage   which operations answer 501 and which documented statuses no test reached,
 *                      printed as a table; fails on either in strict mode (see config.ts).
 *
 * Every response of every suite goes through `send`, which checks it against the spec (status, headers,
 * media type, body schema — problem bodies included). Run one part with `-t`, e.g.
 * `npx vitest run test/conformance -t fuzzing`; the long fuzz run is `npm run fuzz`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adapterOf } from '../../src/providers/normalized-provider.js';
import type { SandboxProvider } from '../../src/providers/sandbox/sandbox-provider.js';
import { ADMIN_KEY, backends, useServer, type TestServer } from '../support/harness.js';
import { FUZZ_RUNS, FUZZ_SEED, KNOWN_DEVIATIONS, STRICT, UNREACHABLE_ALLOWED } from './config.js';
import { expectNoServerError, expectProblemExchange, freshKey, knownDeviation, Recorder, send, type Req, type Target } from './support/exchange.js';
import { Blocked, CONFLICT, fillIds, Fixtures, prepareRequest, ProviderNotRun, REFERENCES } from './support/fixtures.js';
import { hasInputs, invalidRequest, mistakeCase, requestMistakes, validRequest, type FuzzHints } from './support/requests.js';
import { deref, operations, type SpecOperation } from './support/spec-model.js';

/** The main server's rate limit: on, so its headers are checked, and far above what any run sends. */
const UNREACHED_LIMIT = 1_000_000_000;

const byOperation = operations.map((op) => ({ id: op.operationId, op }));
/** Operations with something to probe: credentials, a signature, path ids or a body (not the health probes). */
const probed = byOperation.filter(({ op }) => op.security !== 'none' || op.signed || op.body || op.params.some((p) => p.in === 'path'));

function targetFor(t: TestServer, recorder: Recorder, rateLimit?: number): Target {
  const provider = (t.running.deps.services.provider && adapterOf(t.running.deps.services.provider)) as Partial<SandboxProvider> | undefined;
  return {
    baseUrl: t.running.url,
    rateLimit,
    merchant: t.sandbox,
    adminKey: ADMIN_KEY,
    recorder,
    sign:
      typeof provider?.notificationSecret === 'function'
        ? async (raw) => {
            const id = `msg_${freshKey()}`;
            const at = new Date();
            const signature = new Webhook(await provider!.notificationSecret!()).sign(id, at, raw);
            return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
          }
        : undefined,
  };
}

/** A well-formed id nobody has, for 401/404/413/415 probes. */
function unknownParam(name: string): string {
  if (name === 'provider_id') return 'no-such-provider';
  if (name === 'public_api_key') return 'pk_no_such_key_0000000000';
  return '0d8e6b4a-2c1f-4a97-b3e5-000000000404';
}

/** A request that passes validation but names nothing that exists (its body: the first example). */
function probeRequest(op: SpecOperation, accountId: string): Req | undefined {
  const params = Object.fromEntries(op.params.filter((p) => p.in === 'path').map((p) => [p.name, unknownParam(p.name)]));
  const example = op.body?.examples[0]?.value;
  if (op.body?.required && example === undefined) return undefined;
  // A required account_id in the query (Yuno's /webhooks) is the suite's own account, as in a body.
  const query = Object.fromEntries(op.params.filter((p) => p.in === 'query' && p.required && p.name === 'account_id').map((p) => [p.name, accountId]));
  return {
    params,
    ...(Object.keys(query).length > 0 ? { query } : {}),
    body: example === undefined ? undefined : fillIds(structuredClone(example), { account_id: accountId }),
  };
}

/** The same request with one thing changed (for the reused-key check), or undefined. */
function differentRequest(op: SpecOperation, req: Req): Req | undefined {
  const pathParam = op.params.find((p) => p.in === 'path');
  if (pathParam) return { ...req, params: { ...req.params, [pathParam.name]: unknownParam(pathParam.name) } };
  const body = req.body as Record<string, unknown> | undefined;
  const props = (deref(op.body?.schema ?? {}).properties ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(body ?? {})) {
    const s = deref(props[key]);
    if (typeof value !== 'string' || s.type !== 'string' || s.enum || s.pattern || s.format || s.const) continue;
    if (value.length + 2 <= (s.maxLength ?? Infinity)) return { ...req, body: { ...body, [key]: `${value}-2` } };
  }
  return undefined;
}

const seedOf = (id: string) => FUZZ_SEED + [...id].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 100_000, 7);
const fuzzOptions = (op: SpecOperation) => ({ seed: seedOf(op.operationId), numRuns: hasInputs(op) ? FUZZ_RUNS : 1, interruptAfterTimeLimit: 45_000, markInterruptAsFailure: true });

for (const backend of backends()) {
  describe(`contract conformance on ${backend}`, () => {
    // Rate limiting on with a limit fuzz runs of any length never meet (a second server tests the 429),
    // so every merchant response carries its RateLimit-* headers and the check sees them; the per-address
    // limit on failed authentications off (the fuzzer sends bad credentials on purpose; a third server tests it).
    // Every budget far above what a run sends (the public-key routes report theirs: the same number), and a
    // checkout session that takes every card the fuzzer tokenizes in it.
    const t = useServer(backend, {
      env: {
        RATE_LIMIT_PER_MINUTE: String(UNREACHED_LIMIT),
        PUBLIC_KEY_RATE_LIMIT_PER_MINUTE: String(UNREACHED_LIMIT),
        HOSTED_RATE_LIMIT_PER_ADDRESS: String(UNREACHED_LIMIT),
        HOSTED_RATE_LIMIT_PER_ORGANIZATION: String(UNREACHED_LIMIT),
        CHECKOUT_SESSION_RATE_LIMIT_PER_MINUTE: String(UNREACHED_LIMIT),
        CHECKOUT_SESSION_MAX_CARDS: '1000',
        AUTH_FAILURES_PER_MINUTE: '0',
      },
    });
    const recorder = new Recorder();
    let target: Target;
    let fx: Fixtures;
    // Webhook deliveries go here (answers 200), never to the hosts in the spec's examples.
    let receiver: Server;
    let receiverUrl: string;
    beforeAll(async () => {
      receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      target = targetFor(t, recorder, UNREACHED_LIMIT);
      fx = new Fixtures(target, t.sandbox.account_id, receiverUrl, t.sandbox.organization_id);
    });
    afterAll(async () => {
      receiver?.closeAllConnections();
      await new Promise((resolve) => receiver?.close(resolve));
    });

    describe('example replay', () => {
      it.each(byOperation)('$id: every request example gets its documented status and a body matching the schema', async ({ op }) => {
        const examples = op.body?.examples.length ? op.body.examples : [{ name: '(required parameters only)', value: undefined }];
        if (op.body?.required && op.body.examples.length === 0) {
          recorder.blocked.set(op.operationId, 'the spec has no request example for its body');
          expect(STRICT, `${op.operationId}: add a request example to the spec`).toBe(false);
          return;
        }
        for (const example of examples) {
          const label = `${op.operationId} example "${example.name}"`;
          let req: Req;
          try {
            req = await prepareRequest(op, fx, structuredClone(example.value));
          } catch (err) {
            if (err instanceof ProviderNotRun) continue;
            if (!(err instanceof Blocked)) throw err;
            recorder.blocked.set(op.operationId, err.reason);
            expect(STRICT, `${label}: ${err.reason}`).toBe(false);
            return;
          }

          // The same request for an account of another organization: 403, and nothing happens.
          if (op.responses.has(403) && (req.body as { account_id?: unknown } | undefined)?.account_id !== undefined) {
            const foreignReq = { ...req, body: fillIds(req.body, { account_id: (await fx.organization()).account_id }) };
            const foreign = await send(target, op, foreignReq);
            if (foreign.notImplemented) return;
            expectProblemExchange(foreign, 403, 'INVALID_ACCOUNT_ID');
            if (op.idempotent) {
              // A business error is stored under its key too: the same request again is its replay.
              const replayed = await send(target, op, { ...foreignReq, idempotencyKey: foreign.idempotencyKey });
              expectProblemExchange(replayed, 403, 'INVALID_ACCOUNT_ID');
              expect(replayed.headers.get('idempotent-replayed'), label).toBe('true');
            }
          }
          // The same request naming a resource that does not exist: 404.
          for (const ref of REFERENCES) {
            const probe = fillIds(req.body, { [ref]: unknownParam(ref) });
            if (!op.responses.has(404) || JSON.stringify(probe) === JSON.stringify(req.body)) continue;
            expectProblemExchange(await send(target, op, { ...req, body: probe }), 404);
          }

          const res = await send(target, op, req);
          if (res.notImplemented) return;
          expect(op.success, `${label} answered ${res.status}: ${res.text.slice(0, 500)}`).toContain(res.status);

          if (op.idempotent) {
            // The same key again: the stored answer, marked as a replay.
            const again = await send(target, op, { ...req, idempotencyKey: res.idempotencyKey });
            expect(again.status, label).toBe(res.status);
            expect(again.body, label).toEqual(res.body);
            expect(again.headers.get('idempotent-replayed'), label).toBe('true');
            expect(res.headers.get('idempotent-replayed'), label).toBeNull();
            // The same key for another request: 422.
            const other = differentRequest(op, req);
            if (other) expectProblemExchange(await send(target, op, { ...other, idempotencyKey: res.idempotencyKey }), 422, 'IDEMPOTENCY_KEY_REUSED');
          }

          // A documented ETag revalidates: If-None-Match answers 304 while nothing changed.
          const etag = res.headers.get('etag');
          if (etag && op.params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'if-none-match')) {
            const cached = await send(target, op, { ...req, headers: { ...req.headers, 'if-none-match': etag } });
            expect(cached.status, label).toBe(304);
            expect(cached.headers.get('etag'), label).toBe(etag);
          }

          // A request the resource's state does not allow: 409 INVALID_STATUS.
          if (op.responses.has(412) && op.params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'if-match')) {
            const stale = await send(target, op, { ...req, headers: { ...req.headers, 'if-match': '"an-etag-the-resource-never-had"' } });
            expectProblemExchange(stale, 412, 'PRECONDITION_FAILED');
          }

          const conflict = CONFLICT[op.operationId];
          if (conflict) expectProblemExchange(await send(target, op, await conflict(fx, structuredClone(example.value), req)), 409, 'INVALID_STATUS');

          // The same request once more with a fresh key: whatever the business answer is (a duplicate,
          // a state conflict, another resource), it is documented, not a 400, not a 5xx.
          const repeat = await send(target, op, { ...req, idempotencyKey: undefined });
          expectNoServerError(repeat);
          expect(repeat.status, `${label} repeated: ${repeat.text.slice(0, 300)}`).not.toBe(400);

          recorder.replayed.set(op.operationId, [...(recorder.replayed.get(op.operationId) ?? []), example.name]);
        }
      });
    });

    describe('targeted statuses', () => {
      it.each(probed)('$id: 401 without credentials, 404 for unknown ids, 415 for another media type, 413 over the limit', async ({ op }) => {
        const probe = probeRequest(op, t.sandbox.account_id);
        expect(probe, `${op.operationId}: the spec has no request example to probe with`).toBeDefined();
        if (!probe) return;

        if (op.security !== 'none') {
          expectProblemExchange(await send(target, op, { ...probe, auth: 'none' }), 401, 'INVALID_CREDENTIALS');
        } else if (op.signed) {
          const bad = { 'webhook-id': 'msg_bad', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,YmFk' };
          const params = Object.fromEntries(Object.keys(probe.params ?? {}).map((k) => [k, k === 'provider_id' ? 'sandbox' : unknownParam(k)]));
          expectProblemExchange(await send(target, op, { ...probe, params, auth: bad }), 401);
        }
        if (op.responses.has(404) && op.params.some((p) => p.in === 'path')) {
          expectProblemExchange(await send(target, op, probe), 404);
        }
        if (op.body) {
          const raw = JSON.stringify(probe.body ?? {});
          expectProblemExchange(await send(target, op, { ...probe, body: undefined, rawBody: raw, contentType: 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
          const padding = 'x'.repeat(op.bodyLimit + 1);
          expectProblemExchange(await send(target, op, { ...probe, body: undefined, rawBody: `{"padding":"${padding}"}` }), 413, 'PAYLOAD_TOO_LARGE');
        }
      });
    });

    describe('schema-driven fuzzing', () => {
      const hints: FuzzHints = {
        accountId: '',
        customerIds: [],
        vaultedTokens: [],
        paymentIds: [],
        chargebacks: [],
        organizationIds: [],
        webhookEndpointIds: [],
        deliveries: [],
        notifiedConnectionIds: [],
        receiverUrl: '',
      };
      beforeAll(async () => {
        hints.accountId = t.sandbox.account_id;
        hints.receiverUrl = receiverUrl;
        // Real ids for the generator to mix in; a fixture whose operation answers 501 is left out.
        const attempt = async (make: () => Promise<void>) => {
          try {
            await make();
          } catch (err) {
            if (!(err instanceof Blocked)) throw err;
          }
        };
        await attempt(async () => void hints.customerIds.push(await fx.customer(), await fx.customer()));
        await attempt(async () => void hints.organizationIds.push((await fx.organization()).organization_id));
        await attempt(async () => void hints.vaultedTokens.push(await fx.card(hints.customerIds[0]!)));
        await attempt(async () => void hints.paymentIds.push((await fx.payment()).id));
        await attempt(async () => void hints.chargebacks.push(await fx.chargeback(), await fx.chargeback()));
        await attempt(async () => void hints.webhookEndpointIds.push(await fx.webhookEndpoint()));
        await attempt(async () => void hints.deliveries.push(await fx.delivery()));
        // The sandbox providers' connections: the suite signs as the sandbox does (a real provider's connection, e.g. one a
        // createConnection example made, verifies its own provider's signature: 401 for ours, rightly).
        await attempt(async () => {
          const byProvider = await fx.connections();
          hints.notifiedConnectionIds.push(...['SANDBOX_A', 'SANDBOX_B'].flatMap((id) => (byProvider[id] ? [byProvider[id]] : [])));
        });
      });

      it.each(byOperation)('$id: valid requests never get 400, 401, 413, 415 or a 5xx', async ({ op }) => {
        await fc.assert(
          fc.asyncProperty(validRequest(op, hints), async (r) => {
            const ex = await send(target, op, { params: r.params, query: r.query, headers: r.headers, body: r.body });
            if (ex.notImplemented) return;
            expectNoServerError(ex);
            if (ex.status === 400 && knownDeviation(recorder, ex, 'valid-request-rejected') && !STRICT) return;
            expect([400, 401, 413, 415], `valid request answered ${ex.status}: ${ex.text.slice(0, 500)}`).not.toContain(ex.status);
          }),
          fuzzOptions(op),
        );
      });

      it.each(byOperation)('$id: schema violations get 400 problem+json naming the field', async ({ op }) => {
        await fc.assert(
          fc.asyncProperty(invalidRequest(op, hints), async (bad) => {
            const ex = await send(target, op, { params: bad.req.params, query: bad.req.query, headers: bad.req.headers, body: bad.req.body });
            if (ex.notImplemented) return;
            const size = JSON.stringify(bad.req.body ?? '').length;
            if (size > op.bodyLimit) return expectProblemExchange(ex, 413, 'PAYLOAD_TOO_LARGE');
            expectProblemExchange(ex, 400, 'INVALID_REQUEST');
            const paths = ((ex.body as { errors?: { path: string }[] }).errors ?? []).map((e) => e.path);
            const named = paths.some((p) => p === bad.pointer || bad.pointer.startsWith(`${p}/`) || p.startsWith(`${bad.pointer}/`));
            expect(named, `${bad.kind} at ${bad.pointer}: errors name ${JSON.stringify(paths)}`).toBe(true);
          }),
          fuzzOptions(op),
        );
      });

      it.each(byOperation.filter(({ op }) => requestMistakes(op).length > 0))('$id: wrong media type, malformed JSON, bad credentials, signature or idempotency key get their 4xx', async ({ op }) => {
        const kinds = requestMistakes(op);
        await fc.assert(
          fc.asyncProperty(validRequest(op, hints), fc.constantFrom(...kinds), fc.nat(), async (r, kind, variant) => {
            const c = mistakeCase(op, kind, r, variant);
            const ex = await send(target, op, c.req);
            if (ex.notImplemented) return;
            expectProblemExchange(ex, c.status, c.code);
          }),
          fuzzOptions(op),
        );
      });
    });

    describe('second server: rate limit of 1 request a minute, admin API off', () => {
      const small = useServer(backend, { env: { RATE_LIMIT_PER_MINUTE: '1', ADMIN_API_KEY: '' } });

      it('429 RATE_LIMITED with Retry-After on every merchant operation past the limit', async () => {
        const st = targetFor(small, recorder, 1);
        for (const op of operations.filter((o) => o.security === 'merchant' && o.responses.has(429))) {
          const probe = probeRequest(op, small.sandbox.account_id) ?? { params: {}, body: {} };
          // A fixed window may roll over once during the loop; the limit holds again on the next try.
          let ex = await send(st, op, probe);
          for (let i = 0; i < 3 && ex.status !== 429; i++) ex = await send(st, op, probe);
          expectProblemExchange(ex, 429, 'RATE_LIMITED');
        }
      });

      it('404 on every admin operation when ADMIN_API_KEY is not set', async () => {
        const st = targetFor(small, recorder, 1);
        for (const op of operations.filter((o) => o.security === 'admin')) {
          expectProblemExchange(await send(st, op, probeRequest(op, small.sandbox.account_id) ?? {}), 404, 'NOT_FOUND');
        }
      });
    });

    describe('third server: 1 failed authentication a minute per address', () => {
      const limited = useServer(backend, { env: { AUTH_FAILURES_PER_MINUTE: '1', RATE_LIMIT_PER_MINUTE: '0' } });

      it('429 RATE_LIMITED with Retry-After on every authenticated operation once the address failed authentication too often', async () => {
        const st = targetFor(limited, recorder);
        for (const op of operations.filter((o) => o.security !== 'none' && o.responses.has(429))) {
          const probe = probeRequest(op, limited.sandbox.account_id) ?? { params: {}, body: {} };
          // The first failure of a window answers 401; from the second on, the address is refused.
          let ex = await send(st, op, { ...probe, auth: 'none' });
          for (let i = 0; i < 3 && ex.status !== 429; i++) ex = await send(st, op, { ...probe, auth: 'none' });
          expectProblemExchange(ex, 429, 'RATE_LIMITED');
        }
      });
    });

    describe('handler coverage', () => {
      it('every operation is implemented (no 501) and every documented status is reached', () => {
        const allowed = (op: SpecOperation, status: number) =>
          UNREACHABLE_ALLOWED.some((a) => a.status === status && (a.operations === '*' || a.operations.includes(op.operationId)));
        const rows: string[][] = [['operation', 'implemented', 'example replay', 'documented statuses reached', 'not reached (* allowed)']];
        const failures: string[] = [];
        for (const op of operations) {
          const reached = recorder.statuses.get(op.operationId) ?? new Set<number>();
          const documented = [...op.responses.keys()].sort();
          const missing = documented.filter((s) => !reached.has(s));
          const implemented = !recorder.notImplemented.has(op.operationId);
          const blocked = recorder.blocked.get(op.operationId);
          const replay = recorder.replayed.has(op.operationId) ? `ok (${recorder.replayed.get(op.operationId)!.length})` : blocked ? 'blocked' : implemented ? 'FAILED' : '501';
          rows.push([
            op.operationId,
            implemented ? 'yes' : 'NO (501)',
            replay,
            documented.filter((s) => reached.has(s)).join(' ') || '-',
            missing.map((s) => (allowed(op, s) ? `${s}*` : String(s))).join(' ') || '-',
          ]);
          if (!implemented) failures.push(`${op.operationId}: answers 501 NOT_IMPLEMENTED`);
          if (blocked) failures.push(`${op.operationId}: example replay blocked — ${blocked}`);
          for (const s of missing.filter((x) => !allowed(op, x))) failures.push(`${op.operationId}: documented status ${s} not reached by any test`);
        }
        const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
        const table = rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
        table.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
        console.log(
          [
            `Handler coverage on ${backend} (${STRICT ? 'STRICT: gaps fail' : 'report-only: set STRICT_COVERAGE=1 to fail on gaps'}, fuzz seed ${FUZZ_SEED}, ${FUZZ_RUNS} runs)`,
            ...table,
            '* allowed unreachable, see UNREACHABLE_ALLOWED in test/conformance/config.ts',
            ...(failures.length ? ['Gaps:', ...failures.map((f) => `  - ${f}`)] : ['No gaps.']),
            ...(recorder.deviations.size
              ? ['Known deviations met in this run (config.ts KNOWN_DEVIATIONS; fix them, then delete the entry):', ...[...recorder.deviations].map(([d, seen]) => `  - ${d.operationId} ${d.status} ${d.kind}${d.at ? ` at ${d.at}` : ''}: ${d.fix}\n      e.g. ${seen}`)]
              : []),
            ...KNOWN_DEVIATIONS.filter((d) => !recorder.deviations.has(d)).map((d) => `  (not met in this run: ${d.operationId} ${d.status} ${d.kind}${d.at ? ` at ${d.at}` : ''} — fixed? then delete it)`),
          ].join('\n'),
        );
        for (const [d] of recorder.deviations) failures.push(`${d.operationId}: known deviation ${d.status} ${d.kind}`);

        // Always: every operation of the spec was exercised by this suite.
        expect(operations.filter((op) => !recorder.statuses.has(op.operationId)).map((op) => op.operationId)).toEqual([]);
        if (STRICT) expect(failures).toEqual([]);
      });
    });
  });
}
