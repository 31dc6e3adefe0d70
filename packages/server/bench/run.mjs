#!/usr/bin/env node
/**
 * `npm run bench`: autocannon against, in one run on this machine,
 *   1. a bare Express 5 app answering comparable JSON (the bare ceiling),
 *   2. the stack's own ceiling (stack-ceiling.mjs: Express + this project's validator + one PostgreSQL
 *      primary-key read of a ~4 KB row, issue 26),
 *   3. the service on PGlite (embedded) and
 *   4. the service on PostgreSQL (DATABASE_URL, default the local server on 127.0.0.1:5432), and
 *   5. with BENCH_BASELINE=<an older build's packages/server>, that build on PostgreSQL (docs/benchmarks.md),
 * for GET /payments/{id}, POST /customers, GET payment-methods, enrollment, a dispute with 1 MB of
 * evidence (10 concurrent), and POST /payments through routing with the sandbox acquirers as their own
 * process on loopback (once healthy, once with SANDBOX_A failing half its calls: the failovers are read
 * from the service's GET /metrics) and once through a STRIPE connection to the Stripe test double (its own
 * process, compiled from test/doubles/stripe into dist/test-doubles), plus cold start on an existing data dir and peak RSS. Each service scenario
 * runs right after the same scenario against the ceiling, and its ratio is taken to that ceiling (the
 * machine's speed drifts over minutes). Prints a table and writes bench-results.json. Servers run as separate processes, so
 * the load generator does not share their event loop, in production mode: no response validation, access
 * logs on, rate limiting on with a limit the load never reaches (so its cost is measured: the database
 * store with PostgreSQL, the process's with PGlite). Not part of `npm test`: figures, not pass/fail.
 */
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const here = dirname(fileURLToPath(import.meta.url));
/** This build's server package; BENCH_BASELINE names an older build's (its dist/ built) to run the same scenarios against in the same run. */
const SERVER_DIR = join(here, '..');
const BASELINE = process.env.BENCH_BASELINE;
/** The stack's own ceiling (stack-ceiling.mjs): Express + the validator + one primary-key read; needs PostgreSQL. */
const STACK_CEILING = join(here, 'stack-ceiling.mjs');
/** How the service's connections are named in pg_stat_activity, so PostgreSQL's CPU for them can be read. */
const SERVICE_APP_NAME = 'payorch-bench-service';
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const PG_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DISPUTES = Number(process.env.BENCH_DISPUTES ?? 400);
// Narrow a run while profiling: BENCH_RUNS=postgres BENCH_SCENARIOS=GET,dispute (substrings of the names; the ceiling always runs).
const RUNS = (process.env.BENCH_RUNS ?? 'pglite,postgres').split(',');
const SCENARIOS = process.env.BENCH_SCENARIOS?.split(',');
// Only the payment scenarios: BENCH_SCENARIOS='POST /payments'.
// BENCH_PROFILE=<dir>: the services write V8 CPU profiles there (open in Chrome DevTools).
const PROFILE = process.env.BENCH_PROFILE;
// V8 flags for the service process only (GC experiments): BENCH_NODE_FLAGS='--max-old-space-size=160'.
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
const selected = (list) => (SCENARIOS ? list.filter((s) => SCENARIOS.some((f) => s.name.includes(f))) : list);
/** The sandbox acquirers' own process (issue 16): without it (an older build) the payment scenarios use whatever the service calls. */
const acquirersOf = (serverDir) => join(serverDir, 'dist', 'providers', 'sandbox', 'acquirers-main.js');
/**
 * The Stripe test double (test/doubles/stripe) as its own process, for `POST /payments through the Stripe
 * double`: compiled from TypeScript into dist/test-doubles/ once per run (Node 20 runs no TypeScript and
 * the repository has no tsx), where `stripe` resolves from node_modules.
 */
const STRIPE_DOUBLE = join(here, '..', 'dist', 'test-doubles', 'doubles', 'stripe', 'main.js');
const STRIPE_SCENARIO = 'POST /payments through the Stripe double';
let stripeDoubleBuilt;
function buildStripeDouble() {
  stripeDoubleBuilt ??= (() => {
    const tsc = join(here, '..', '..', '..', 'node_modules', '.bin', 'tsc');
    const r = spawnSync(tsc, ['-p', join(here, 'tsconfig.stripe-double.json')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`compiling the Stripe double failed: ${r.stdout}${r.stderr}`);
    return STRIPE_DOUBLE;
  })();
  return stripeDoubleBuilt;
}
/** BENCH_ACQUIRER_LEDGERS=memory: the acquirers' ledgers in their memory even in the PostgreSQL run. */
const ACQUIRER_LEDGERS = process.env.BENCH_ACQUIRER_LEDGERS ?? 'database';
// The service's GET /metrics, read after each payment scenario (failovers, provider calls by outcome).
const METRICS_TOKEN = `bench-metrics-${randomUUID()}`;
const APPROVED_CARD = '4507990000000002';
// The tenant-isolation scenario makes its second organization through the admin API.
const ADMIN_API_KEY = `bench-admin-${randomUUID()}`;
/** Refunds in tenant X's burst, and tenant Y's GETs for its baseline. */
const BURST_REFUNDS = Number(process.env.BENCH_BURST ?? 150);
const BASELINE_GETS = 200;

/**
 * Starts a server process. Its standard output goes to a file (the path is printed on failure), not into
 * this process: autocannon runs on this event loop, and reading a thousand access lines a second here
 * would slow the load generator instead of the server. The listening line is found by polling the file.
 */
function startProcess(script, env, ready = (text) => /listening on (http:\/\/[0-9.:]+)/.exec(text)?.[1]) {
  const started = Date.now();
  const service = script.endsWith(join('dist', 'main.js'));
  const flags = service ? [...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : []), ...NODE_FLAGS] : [];
  const logFile = join(tmpdir(), `payorch-bench-${process.pid}-${basename(script)}-${started}.log`);
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...flags, script], { env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited = false;
  const url = new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      exited = true;
      reject(new Error(`${script} exited ${code}; its output: ${logFile}`));
    });
    const poll = async () => {
      if (exited) return;
      const found = ready(await readFile(logFile, 'utf8'));
      if (found) resolve(found);
      else setTimeout(poll, 10);
    };
    void poll();
  });
  return {
    child,
    logFile,
    url: url.then((u) => ({ url: u, startMs: Date.now() - started })),
    // A clean stop removes the output (megabytes of access lines); a failure's stays for reading.
    stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }).then(() => rm(logFile, { force: true })),
  };
}

async function memoryOf(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { rssMb: kb('VmRSS'), peakMb: kb('VmHWM') };
}

/**
 * A short unmeasured run first: the validator compiles an operation's schemas on its first request
 * (seconds on a loaded machine), prepared statements are made per connection, V8 optimizes the hot path.
 */
const WARM_UP = Number(process.env.BENCH_WARMUP ?? 100);
async function warmUp(base, scenario) {
  if (WARM_UP <= 0 || scenario.memory) return;
  await autocannon({ url: base, connections: Math.min(10, scenario.connections), amount: WARM_UP, pipelining: 1, requests: [scenario.request] });
}

async function load(base, scenario) {
  const result = await autocannon({
    url: base,
    connections: scenario.connections,
    ...(scenario.amount ? { amount: scenario.amount } : { duration: DURATION }),
    pipelining: 1,
    requests: [scenario.onResponse ? { ...scenario.request, onResponse: scenario.onResponse } : scenario.request],
  });
  const ok = result['2xx'];
  return {
    // Completed requests over the elapsed time (autocannon's per-second average rounds short runs badly).
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

const pdf = (() => {
  const head = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n');
  const tail = Buffer.from('\ntrailer << /Root 1 0 R >>\n%%EOF\n');
  const body = Buffer.alloc(1_048_576 - head.length - tail.length, 0x20);
  return Buffer.concat([head, body, tail]).toString('base64');
})();

// Serialized once: the load generator shares the CPU, so it must not spend it building 1.4 MB bodies.
const disputeBody = JSON.stringify({ evidence: [{ content_type: 'application/pdf', file_name: 'receipt.pdf', content_category: 'RECEIPT', content: pdf }] });

/** The bare app answers any id: the scenarios' paths only need the right shape. */
function bareFixtures() {
  return { creds: null, paymentId: randomUUID(), customerId: randomUUID(), accountId: randomUUID(), chargebacks: [], acquirers: null };
}

/** A card payment in the sandbox organization's account: the default CARD routing (SANDBOX_A, then SANDBOX_B) applies. */
function paymentBody(fx, number) {
  return JSON.stringify({
    account_id: fx.accountId, description: 'Bench order', country: 'BR', merchant_order_id: `bench-${randomUUID()}`,
    amount: { currency: 'BRL', value: 150.5 }, customer_payer: { id: fx.customerId },
    payment_method: { type: 'CARD', detail: { card: { card_data: { number, holder_name: 'Bench Payer', expiration_month: 12, expiration_year: 30, security_code: '123' } } } },
  });
}

/** Tallies the payments' statuses as the service answered them (the load generator reads each body). */
function statusTally() {
  const counts = {};
  return {
    counts,
    onResponse(status, body) {
      let key = `HTTP ${status}`;
      if (status === 201 || status === 200) {
        try {
          key = JSON.parse(body).status ?? key;
        } catch {}
      }
      counts[key] = (counts[key] ?? 0) + 1;
    },
  };
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
function latencyStats(ms) {
  const sorted = [...ms].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
  return { count: sorted.length, mean: Number(mean.toFixed(2)), p50: Number(percentile(sorted, 50).toFixed(2)), p95: Number(percentile(sorted, 95).toFixed(2)), max: Number(sorted.at(-1).toFixed(2)) };
}

/**
 * Issue 21 finding 2: tenant Y reads its payment one GET after another, alone (the baseline), then while
 * tenant X sends BURST_REFUNDS concurrent 1 BRL refunds on one payment. Prints both latencies, their ratio
 * (the design's bound: within 2x), Y's failures and X's answers by status.
 */
async function tenantIsolation(url, fx) {
  const base = `${url}/v1`;
  const res = await fetch(`${base}/admin/organizations`, { method: 'POST', headers: { 'content-type': 'application/json', 'admin-api-key': ADMIN_API_KEY }, body: JSON.stringify({ name: 'Bench tenant Y', pci_certified: true }) });
  if (res.status !== 201) throw new Error(`admin organizations → ${res.status}: ${await res.text()}`);
  const y = await res.json();
  const key = () => ({ 'x-idempotency-key': randomUUID() });
  const card = { number: APPROVED_CARD, holder_name: 'Bench Tenant', expiration_month: 12, expiration_year: 30, security_code: '123' };
  const pay = async (creds, value) => {
    const customer = await api(base, creds, 'POST', '/customers', { merchant_customer_id: `bench-iso-${randomUUID()}` });
    return api(base, creds, 'POST', '/payments', {
      account_id: creds.account_id, description: 'Bench order', country: 'BR', merchant_order_id: `bench-${randomUUID()}`,
      amount: { currency: 'BRL', value }, customer_payer: { id: customer.id },
      payment_method: { type: 'CARD', detail: { card: { card_data: card } } },
    }, key());
  };
  const yPayment = await pay(y, 10);
  const xPayment = await pay(fx.creds, BURST_REFUNDS + 0.5);
  // The created payment's `transactions` is the transaction just made (Yuno's create shape).
  const purchase = Array.isArray(xPayment.transactions) ? xPayment.transactions.find((t) => t.type === 'PURCHASE') : xPayment.transactions;
  const yHeaders = { 'public-api-key': y.public_api_key, 'private-secret-key': y.private_secret_key };
  let yFailures = 0;
  const yGet = async () => {
    const started = performance.now();
    const r = await fetch(`${base}/payments/${yPayment.id}`, { headers: yHeaders });
    await r.arrayBuffer();
    if (r.status !== 200) yFailures++;
    return performance.now() - started;
  };
  for (let i = 0; i < 20; i++) await yGet(); // warm up (connections, caches)
  const baseline = [];
  for (let i = 0; i < BASELINE_GETS; i++) baseline.push(await yGet());
  yFailures = 0;

  const during = [];
  let bursting = true;
  const reader = (async () => {
    while (bursting) during.push(await yGet());
  })();
  const xAnswers = {};
  const burstStarted = performance.now();
  await Promise.all(
    Array.from({ length: BURST_REFUNDS }, async () => {
      const r = await fetch(`${base}/payments/${xPayment.id}/transactions/${purchase.id}/refund`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'public-api-key': fx.creds.public_api_key, 'private-secret-key': fx.creds.private_secret_key, ...key() },
        body: JSON.stringify({ amount: { currency: 'BRL', value: 1 } }),
      });
      const body = await r.json().catch(() => ({}));
      const k = r.status === 200 ? '200' : `${r.status} ${body.code ?? ''}`;
      xAnswers[k] = (xAnswers[k] ?? 0) + 1;
    }),
  );
  const burstMs = performance.now() - burstStarted;
  bursting = false;
  await reader;
  const b = latencyStats(baseline);
  const d = latencyStats(during);
  const ratio = { mean: Number((d.mean / b.mean).toFixed(2)), p50: Number((d.p50 / b.p50).toFixed(2)), p95: Number((d.p95 / b.p95).toFixed(2)) };
  const answers = Object.entries(xAnswers).map(([k, v]) => `${k} ×${v}`).join(', ');
  return {
    isolation: true,
    baseline: b,
    during: d,
    ratio,
    yFailures,
    burstMs: Math.round(burstMs),
    xAnswers,
    summary:
      `tenant Y GET baseline mean ${b.mean} ms p50 ${b.p50} p95 ${b.p95} (${b.count} GETs); during X's ${BURST_REFUNDS} refunds (${Math.round(burstMs)} ms) ` +
      `mean ${d.mean} ms p50 ${d.p50} p95 ${d.p95} max ${d.max} (${d.count} GETs, ${yFailures} failed); ratio mean ${ratio.mean}x p50 ${ratio.p50}x p95 ${ratio.p95}x; X answered ${answers}`,
  };
}

function scenarios(fx) {
  const auth = fx.creds ? { 'public-api-key': fx.creds.public_api_key, 'private-secret-key': fx.creds.private_secret_key } : {};
  const json = { 'content-type': 'application/json', ...auth };
  let dispute = 0;
  const payment = (name, extra) => {
    const tally = statusTally();
    return {
      name,
      connections: 20,
      payments: tally.counts,
      onResponse: fx.creds ? tally.onResponse : undefined,
      request: { method: 'POST', path: '/v1/payments', setupRequest: (r) => ({ ...r, headers: { ...json, 'x-idempotency-key': randomUUID() }, body: paymentBody(fx, APPROVED_CARD) }) },
      ...extra,
    };
  };
  const faults = (faultsBody) => async () => {
    const res = await fetch(`${fx.acquirers.SANDBOX_A_URL}/_sandbox/faults`, { method: faultsBody ? 'PUT' : 'DELETE', headers: { 'content-type': 'application/json' }, body: faultsBody && JSON.stringify(faultsBody) });
    if (!res.ok) throw new Error(`SANDBOX_A /_sandbox/faults answered ${res.status}: ${await res.text()}`);
  };
  return [
    { name: 'GET /payments/{id}', connections: 50, request: { method: 'GET', path: `/v1/payments/${fx.paymentId}`, headers: auth } },
    { name: 'GET /customers/{id}', connections: 50, request: { method: 'GET', path: `/v1/customers/${fx.customerId}`, headers: auth } },
    { name: 'GET /payments (list)', connections: 50, request: { method: 'GET', path: `/v1/payments?customer_id=${fx.customerId}&limit=10`, headers: auth } },
    {
      name: 'POST /customers',
      connections: 50,
      request: { method: 'POST', path: '/v1/customers', headers: json, setupRequest: (r) => ({ ...r, body: JSON.stringify({ merchant_customer_id: `bench-${randomUUID()}`, first_name: 'Bench', email: 'bench@example.com' }) }) },
    },
    { name: 'GET payment-methods', connections: 50, request: { method: 'GET', path: `/v1/customers/${fx.customerId}/payment-methods`, headers: auth } },
    {
      name: 'POST enrollment',
      connections: 50,
      request: {
        method: 'POST',
        path: `/v1/customers/${fx.customerId}/payment-methods`,
        setupRequest: (r) => ({
          ...r,
          headers: { ...json, 'x-idempotency-key': randomUUID() },
          body: JSON.stringify({ account_id: fx.accountId, country: 'BR', type: 'CARD', card_data: { number: '4507990000000002', holder_name: 'Bench', expiration_month: 12, expiration_year: 30, security_code: '123' } }),
        }),
      },
    },
    {
      name: 'POST dispute (1 MB PDF)',
      connections: 10,
      amount: Math.max(10, fx.chargebacks.length || DISPUTES),
      memory: true,
      request: {
        method: 'POST',
        setupRequest: (r) => {
          const cb = fx.chargebacks[dispute++ % Math.max(1, fx.chargebacks.length)] ?? { paymentId: fx.paymentId, transactionId: randomUUID() };
          return {
            ...r,
            path: `/v1/payments/${cb.paymentId}/transactions/${cb.transactionId}/dispute`,
            headers: { ...json, 'x-idempotency-key': randomUUID() },
            body: disputeBody,
          };
        },
      },
    },
    { name: 'tenant isolation: Y GET during X refund burst', custom: tenantIsolation },
    payment('POST /payments (routing, loopback providers)'),
    payment('POST /payments, SANDBOX_A failing half its calls', {
      // Only with the acquirers as their own process: their faults are set through their control surface.
      requires: fx.creds && !fx.acquirers ? 'the sandbox acquirers process (dist/providers/sandbox/acquirers-main.js)' : undefined,
      before: fx.acquirers ? faults({ failRate: 0.5, mode: 'error' }) : undefined,
      after: fx.acquirers ? faults(null) : undefined,
    }),
    // The same payments sent to a real connector: a STRIPE connection (POST /v1/connections) at the Stripe
    // double's process, the organization's cards routed to it alone for the scenario.
    payment(STRIPE_SCENARIO, {
      requires: fx.creds && !fx.stripeDouble ? 'the Stripe double process (bench/tsconfig.stripe-double.json)' : undefined,
      before: fx.stripeDouble ? () => routeCardsThroughStripe(fx) : undefined,
      after: fx.stripeDouble ? () => restoreCardRouting(fx) : undefined,
    }),
  ];
}

/** Sums of the service's counters that the payment scenarios report (GET /metrics with the bench's token). */
async function orchestrationCounters(url) {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).catch(() => undefined);
  if (!res?.ok) return undefined; // an older build without /metrics
  const counters = { failovers: 0, providerCalls: {} };
  for (const line of (await res.text()).split('\n')) {
    const failover = /^payorch_failovers_total\{[^}]*\} (\S+)$/.exec(line);
    if (failover) counters.failovers += Number(failover[1]);
    const call = /^payorch_provider_calls_total\{provider="([^"]+)",connection="[^"]*",operation="([^"]+)",outcome="([^"]+)"\} (\S+)$/.exec(line);
    if (call) {
      const key = `${call[1]} ${call[2]} ${call[3]}`;
      counters.providerCalls[key] = (counters.providerCalls[key] ?? 0) + Number(call[4]);
    }
  }
  return counters;
}

function counterDelta(before, after) {
  if (!before || !after) return undefined;
  const providerCalls = {};
  for (const [k, v] of Object.entries(after.providerCalls)) if (v - (before.providerCalls[k] ?? 0) > 0) providerCalls[k] = v - (before.providerCalls[k] ?? 0);
  return { failovers: after.failovers - before.failovers, providerCalls };
}

async function api(base, creds, method, path, body, extra = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key, ...extra },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/**
 * The Stripe scenario's setup: a STRIPE connection of the bench organization (made once, with well-formed
 * test keys: the double takes any) and its CARD routing's default route sent to it alone; the routing
 * as it was is kept for restoreCardRouting.
 */
async function routeCardsThroughStripe(fx) {
  const base = `${fx.url}/v1`;
  fx.stripeConnectionId ??= (await api(base, fx.creds, 'POST', '/connections', {
    provider_id: 'STRIPE', name: 'Bench Stripe double', environment: 'TEST',
    credentials: { secret_key: `sk_test_${randomUUID().replaceAll('-', '')}`, webhook_secret: `whsec_${randomUUID().replaceAll('-', '')}` },
  }, { 'x-idempotency-key': randomUUID() })).connection_id;
  const [routing] = await api(base, fx.creds, 'GET', `/routing?account_id=${fx.accountId}&payment_method=CARD`);
  fx.cardRouting = routing;
  await api(base, fx.creds, 'PATCH', `/routing/${routing.id}`, {
    default_route: { steps: [{ index: 1, provider_id: 'STRIPE', connection_id: fx.stripeConnectionId }] },
    condition_sets: routing.condition_sets ?? [],
  });
}

async function restoreCardRouting(fx) {
  const r = fx.cardRouting;
  const steps = r.default_route.steps.map(({ index, provider_id, connection_id }) => ({ index, provider_id, connection_id }));
  await api(`${fx.url}/v1`, fx.creds, 'PATCH', `/routing/${r.id}`, { default_route: { steps }, condition_sets: r.condition_sets ?? [] });
}

/** Customer, enrolled card, payment, and one fresh chargeback per dispute request. */
async function fixtures(url, creds, acquirers, stripeDouble) {
  const base = `${url}/v1`;
  const key = () => ({ 'x-idempotency-key': randomUUID() });
  const customer = await api(base, creds, 'POST', '/customers', { merchant_customer_id: `bench-fx-${randomUUID()}` });
  const card = { number: '4507990000000002', holder_name: 'Bench Fixture', expiration_month: 12, expiration_year: 30, security_code: '123' };
  const fx = { url, creds, customerId: customer.id, accountId: creds.account_id, paymentId: randomUUID(), chargebacks: [], missing: [], acquirers, stripeDouble };
  try {
    for (let i = 0; i < 20; i++) {
      await api(base, creds, 'POST', `/customers/${customer.id}/payment-methods`, { account_id: creds.account_id, country: 'BR', type: 'CARD', card_data: card }, key());
    }
  } catch (err) {
    fx.missing.push(`enrollment: ${err.message}`);
  }
  const pay = (number) =>
    api(base, creds, 'POST', '/payments', {
      account_id: creds.account_id, description: 'Bench order', country: 'BR', merchant_order_id: `bench-${randomUUID()}`,
      amount: { currency: 'BRL', value: 150.5 }, customer_payer: { id: customer.id },
      payment_method: { type: 'CARD', detail: { card: { card_data: { ...card, number } } } },
    }, key());
  try {
    fx.paymentId = (await pay('4507990000000002')).id;
    const disputes = selected([{ name: 'POST dispute (1 MB PDF)' }]).length > 0 ? DISPUTES : 0;
    for (let i = 0; i < disputes; i++) {
      const p = await pay('4507990000000002');
      const cb = await api(base, creds, 'POST', `/sandbox/payments/${p.id}/chargebacks`, { reason: 'REQUESTED_BY_CUSTOMER' });
      fx.chargebacks.push({ paymentId: p.id, transactionId: cb.id });
    }
  } catch (err) {
    fx.missing.push(`payments: ${err.message}`);
  }
  return fx;
}

/** CPU time of a process so far, in ms (utime + stime from /proc: what process.cpuUsage reports inside it). */
async function cpuMsOf(pid) {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined; // gone, or another machine's
  }
}
const CLOCK_TICKS = 100;

/**
 * What PostgreSQL spends for the service: the CPU of the server processes (backends) of its connections
 * (application_name SERVICE_APP_NAME, on this machine: /proc), by pid. pg_stat_statements would give
 * statement times, but it needs shared_preload_libraries (a server restart); the backends' CPU is the
 * server's actual cost, parsing, planning and commit included.
 */
async function pgBackendCpu(admin) {
  const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [SERVICE_APP_NAME]);
  const cpu = new Map();
  for (const { pid } of rows) {
    const ms = await cpuMsOf(pid);
    if (ms !== undefined) cpu.set(pid, ms);
  }
  return cpu;
}
function pgCpuDelta(before, after) {
  let ms = 0;
  for (const [pid, v] of after) ms += v - (before.get(pid) ?? 0); // a backend born meanwhile: all of it
  return ms;
}

/** PostgreSQL's own counts for the service's database (pg_stat_database: commits include read-only transactions). */
async function pgDatabaseStats(admin) {
  // Backends report their counts at most once a second (PostgreSQL 15): a fresh snapshot after they did.
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await admin.query('SELECT xact_commit::float8 AS commits, xact_rollback::float8 AS rollbacks, tup_inserted::float8 AS inserted, tup_updated::float8 AS updated FROM pg_stat_database WHERE datname = current_database()');
  return rows[0];
}

/** The adapter's counts as the service's /metrics exposes them (db/counters.ts), both scopes summed; undefined for an older build. */
async function dbCounters(url) {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).catch(() => undefined);
  if (!res?.ok) return undefined;
  const out = {};
  const field = { statements: 'statements', round_trips: 'roundTrips', commits: 'commits', transactions: 'transactions', rollbacks: 'rollbacks' };
  for (const line of (await res.text()).split('\n')) {
    const m = /^payorch_db_(statements|round_trips|commits|transactions|rollbacks)_total\{scope="(request|background)"\} (\S+)$/.exec(line);
    if (!m) continue;
    // The requests' own work, and everything (the workers' polling and the rate limiter's flushes too).
    const name = field[m[1]];
    if (m[2] === 'request') out[name] = Number(m[3]);
    out[`${name}All`] = (out[`${name}All`] ?? 0) + Number(m[3]);
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * The service in one backend, each scenario right after the same scenario against the bare-Express
 * ceiling and the stack ceiling (both still running from main): this machine's speed drifts by ±15 % over
 * minutes, so each ratio is taken against ceilings measured seconds before it, not at the start of the run.
 * `serverDir` is the build to run (this one, or BENCH_BASELINE's). Per scenario it reads, before and after:
 * the service's CPU (/proc), its database counters (/metrics), and with PostgreSQL the CPU of the service's
 * backends and pg_stat_database, and reports them per answered request (per payment in the payment scenarios).
 */
async function benchService(label, env, ceilings, serverDir = SERVER_DIR) {
  const dataDir = env.DATA_DIR;
  // The acquirers run as their own process (a provider elsewhere, as in production; its faults settable).
  // Their ledgers go in a database of their own in the PostgreSQL run (so the service's database counts
  // only the service's work), in their memory otherwise (PGlite is one process's) or with
  // BENCH_ACQUIRER_LEDGERS=memory (to compare).
  const ledgersInDb = env.ACQUIRERS_DATABASE_URL !== undefined && ACQUIRER_LEDGERS !== 'memory';
  const acquirersMain = acquirersOf(serverDir);
  const acquirersProc = existsSync(acquirersMain)
    ? startProcess(acquirersMain, { DATABASE_URL: ledgersInDb ? env.ACQUIRERS_DATABASE_URL : '' }, (text) => /^\{.*"SANDBOX_A_URL".*\}$/m.exec(text)?.[0])
    : undefined;
  const acquirers = acquirersProc ? JSON.parse((await acquirersProc.url).url) : null;
  // The Stripe double's process, when its scenario is selected: the service is told its address (STRIPE_API_URL).
  const stripeProc = selected([{ name: STRIPE_SCENARIO }]).length > 0
    ? startProcess(buildStripeDouble(), {}, (text) => /^\{.*"STRIPE_API_URL".*\}$/m.exec(text)?.[0])
    : undefined;
  const stripeDouble = stripeProc ? JSON.parse((await stripeProc.url).url) : null;
  const { ACQUIRERS_DATABASE_URL: _ledgers, ...serviceOwnEnv } = env;
  const serviceEnv = {
    PORT: '0', HOST: '127.0.0.1', SANDBOX: 'true', RATE_LIMIT_PER_MINUTE: '100000000', LOG_LEVEL: 'info', NODE_ENV: 'production', METRICS_TOKEN, ADMIN_API_KEY,
    ...(acquirers ?? {}),
    ...(stripeDouble ?? {}),
    ...serviceOwnEnv,
  };
  if (serviceEnv.DATABASE_URL) {
    const u = new URL(serviceEnv.DATABASE_URL);
    u.searchParams.set('application_name', SERVICE_APP_NAME);
    serviceEnv.DATABASE_URL = u.toString();
  }
  const main = join(serverDir, 'dist', 'main.js');
  const first = startProcess(main, serviceEnv);
  await first.url;
  await first.stop(); // the first start creates the data dir / schema; cold start is measured on the next
  const proc = startProcess(main, serviceEnv);
  const { url, startMs } = await proc.url;
  const creds = JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8'));
  console.error(`[${label}] cold start ${startMs} ms; creating fixtures…`);
  const fx = await fixtures(url, creds, acquirers, stripeDouble);
  // With PostgreSQL: a connection of the bench's own to the service's database, for its statistics.
  const admin = env.DATABASE_URL ? new pg.Client({ connectionString: env.DATABASE_URL }) : undefined;
  await admin?.connect();
  const results = {};
  const ceiling = {};
  const stack = {};
  const bareScenarios = selected(scenarios(bareFixtures()));
  for (const s of selected(scenarios(fx))) {
    if (s.requires) {
      console.error(`[${label}] ${s.name}: skipped, needs ${s.requires}`);
      fx.missing.push(`${s.name}: needs ${s.requires}`);
      continue;
    }
    if (s.custom) {
      if (!fx.creds) continue;
      const r = (results[s.name] = await s.custom(url, fx));
      console.error(`[${label}] ${s.name}: ${r.summary}`);
      continue;
    }
    const bareScenario = bareScenarios.find((b) => b.name === s.name);
    await warmUp(ceilings.bare, bareScenario);
    const c = (ceiling[s.name] = await load(ceilings.bare, bareScenario));
    console.error(`[${label}] ceiling, bare express ${s.name}: ${c.rps.toFixed(0)} req/s p50 ${c.p50} ms p99 ${c.p99} ms`);
    if (ceilings.stack) {
      await warmUp(ceilings.stack, bareScenario);
      const k = (stack[s.name] = await load(ceilings.stack, bareScenario));
      console.error(`[${label}] ceiling, the stack (express + validator + one PK read) ${s.name}: ${k.rps.toFixed(0)} req/s p50 ${k.p50} ms p99 ${k.p99} ms${k.errors ? ` (${k.errors} not ok)` : ''}`);
    }
    let peakDuring = 0;
    const before = await memoryOf(proc.child.pid);
    const timer = setInterval(async () => {
      const m = await memoryOf(proc.child.pid).catch(() => ({ rssMb: 0 }));
      peakDuring = Math.max(peakDuring, m.rssMb);
    }, 50);
    await warmUp(url, s);
    const countersBefore = s.payments ? await orchestrationCounters(url) : undefined;
    await s.before?.();
    const cost0 = { cpu: await cpuMsOf(proc.child.pid), db: await dbCounters(url), pgCpu: admin && (await pgBackendCpu(admin)), pg: admin && (await pgDatabaseStats(admin)) };
    let r;
    try {
      r = await load(url, s);
    } finally {
      clearInterval(timer);
    }
    const cpuAfter = await cpuMsOf(proc.child.pid);
    const dbAfter = await dbCounters(url);
    const pgCpuAfter = admin && (await pgBackendCpu(admin));
    if (admin) await new Promise((res) => setTimeout(res, 1100)); // the backends' statistics reach pg_stat_database within a second
    const pgAfter = admin && (await pgDatabaseStats(admin));
    await s.after?.();
    const per = Math.max(1, r.ok);
    const perRequest = {
      serviceCpuMs: cost0.cpu !== undefined && cpuAfter !== undefined ? (cpuAfter - cost0.cpu) / per : null,
      pgCpuMs: admin ? pgCpuDelta(cost0.pgCpu, pgCpuAfter) / per : null,
      ...(cost0.db && dbAfter ? Object.fromEntries(Object.keys(dbAfter).map((k) => [k, (dbAfter[k] - (cost0.db[k] ?? 0)) / per])) : {}),
      ...(admin ? { pgCommits: (pgAfter.commits - cost0.pg.commits) / per, pgInserted: (pgAfter.inserted - cost0.pg.inserted) / per, pgUpdated: (pgAfter.updated - cost0.pg.updated) / per } : {}),
    };
    results[s.name] = { ...r, rssBeforeMb: before.rssMb, rssPeakDuringMb: Math.max(peakDuring, before.rssMb), perRequest };
    if (s.payments) {
      results[s.name].payments = s.payments;
      results[s.name].orchestration = counterDelta(countersBefore, await orchestrationCounters(url)) ?? null;
    }
    const k = stack[s.name];
    console.error(
      `[${label}] ${s.name}: ${r.rps.toFixed(0)} req/s (${(r.rps / c.rps).toFixed(2)}x bare${k ? `, ${(r.rps / k.rps).toFixed(2)}x stack` : ''}) p50 ${r.p50} ms p99 ${r.p99} ms (${r.ok} ok, ${r.errors} not ok); ${describeCost(perRequest)}`,
    );
  }
  await admin?.end();
  const mem = await memoryOf(proc.child.pid);
  await proc.stop();
  await acquirersProc?.stop();
  await stripeProc?.stop();
  await rm(dataDir, { recursive: true, force: true }); // a PGlite data dir is ~100 MB
  return { build: serverDir, coldStartMs: startMs, peakRssMb: mem.peakMb, scenarios: results, ceiling, stackCeiling: stack, missingFixtures: fx.missing, acquirers: acquirers ? `own process, ledgers in ${ledgersInDb ? 'a database of their own' : 'memory'}` : 'as the service runs them' };
}

const fmt = (v, digits = 1) => (v === null || v === undefined ? 'n/a' : v.toFixed(digits));
/** One line of what an answered request cost: the service's and PostgreSQL's CPU, and what went to the database. */
function describeCost(p) {
  const driver =
    p.statements !== undefined
      ? `driver: statements ${fmt(p.statements)}, round trips ${fmt(p.roundTrips)}, commits ${fmt(p.commits, 2)}, rollbacks ${fmt(p.rollbacks, 2)} (requests' own; with background work: statements ${fmt(p.statementsAll)}, commits ${fmt(p.commitsAll, 2)})`
      : 'driver counts n/a (an older build)';
  const pgStats = p.pgCommits !== undefined ? `; PostgreSQL: commits ${fmt(p.pgCommits, 2)} (read-only included), rows inserted ${fmt(p.pgInserted)}, updated ${fmt(p.pgUpdated)}` : '';
  return `per request: service CPU ${fmt(p.serviceCpuMs, 2)} ms, PostgreSQL CPU ${fmt(p.pgCpuMs, 2)} ms; ${driver}${pgStats}`;
}

async function freshPgDatabase(name = 'payorch_bench') {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function main() {
  const out = { machine: { cpus: (await import('node:os')).cpus().length, node: process.version, loadAverage: (await import('node:os')).loadavg() }, durationSeconds: DURATION, runs: {} };

  const bare = startProcess(join(here, 'bare-express.mjs'), {});
  const ceilings = { bare: (await bare.url).url };
  // The stack ceiling reads PostgreSQL: without one, only the bare ceiling runs.
  let stackProc;
  try {
    stackProc = startProcess(STACK_CEILING, { DATABASE_URL: await freshPgDatabase('payorch_bench_ceiling') });
    ceilings.stack = (await stackProc.url).url;
  } catch (err) {
    console.error(`[stack ceiling] skipped: ${err.message}`);
  }
  const pgRun = async (label, serverDir) => {
    try {
      const url = await freshPgDatabase();
      const acquirersUrl = await freshPgDatabase('payorch_bench_acquirers');
      return await benchService(label, { DATA_DIR: await mkdtemp(join(tmpdir(), 'payorch-bench-pg-')), DATABASE_URL: url, ACQUIRERS_DATABASE_URL: acquirersUrl }, ceilings, serverDir);
    } catch (err) {
      console.error(`[${label}] skipped: ${err.message}`);
      return undefined;
    }
  };
  try {
    if (RUNS.includes('pglite')) out.runs.pglite = await benchService('pglite', { DATA_DIR: await mkdtemp(join(tmpdir(), 'payorch-bench-')) }, ceilings);
    if (RUNS.includes('postgres')) out.runs.postgres = await pgRun('postgres', SERVER_DIR);
    // The same scenarios against an older build, in the same run (issue 26: "≥ 2× the starting figure").
    if (BASELINE) out.runs.baseline = await pgRun('baseline', BASELINE);
  } finally {
    await bare.stop();
    await stackProc?.stop();
  }
  out.machine.loadAverageAfter = (await import('node:os')).loadavg();

  // The table: each figure with its ratio to the ceilings measured just before it.
  const RUN_NAMES = ['pglite', 'postgres', 'baseline'];
  const backends = RUN_NAMES.filter((run) => out.runs[run]);
  const names = [...new Set(backends.flatMap((run) => Object.keys(out.runs[run].scenarios).filter((n) => !out.runs[run].scenarios[n].isolation)))];
  const rows = [];
  for (const name of names) {
    const ceilingCells = backends.map((run) => {
      const c = out.runs[run].ceiling[name];
      const k = out.runs[run].stackCeiling?.[name];
      return c ? `${c.rps.toFixed(0)}${k ? ` / ${k.rps.toFixed(0)}` : ''}` : 'n/a';
    });
    const cell = (run) => {
      const r = out.runs[run]?.scenarios?.[name];
      const c = out.runs[run]?.ceiling?.[name];
      const k = out.runs[run]?.stackCeiling?.[name];
      if (!r || !c) return 'n/a';
      return `${r.rps.toFixed(0)} (${(r.rps / c.rps).toFixed(2)}x${k ? ` / ${(r.rps / k.rps).toFixed(2)}x` : ''}) p50 ${r.p50} p99 ${r.p99}${r.errors ? ` [${r.errors} non-2xx]` : ''}`;
    };
    // Throughput over the baseline's, raw and with each taken relative to the stack ceiling measured just before it (drift-corrected).
    const vsBaseline = () => {
      const r = out.runs.postgres?.scenarios?.[name];
      const b = out.runs.baseline?.scenarios?.[name];
      if (!r || !b) return 'n/a';
      const rk = out.runs.postgres.stackCeiling?.[name];
      const bk = out.runs.baseline.stackCeiling?.[name];
      return `${(r.rps / b.rps).toFixed(2)}x${rk && bk ? ` (${(r.rps / rk.rps / (b.rps / bk.rps)).toFixed(2)}x against the stack)` : ''}`;
    };
    rows.push([name, ceilingCells.join('; '), ...backends.map(cell), ...(out.runs.baseline ? [vsBaseline()] : [])]);
  }
  const header = [
    'scenario',
    `ceilings req/s: bare / stack (before ${backends.join(', ')})`,
    ...backends.map((b) => `${b} req/s (x bare / x stack) ms`),
    ...(out.runs.baseline ? ['PostgreSQL vs baseline'] : []),
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cols) => `| ${cols.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
  for (const run of RUN_NAMES) {
    const r = out.runs[run];
    if (!r) continue;
    const d = r.scenarios['POST dispute (1 MB PDF)'];
    console.log(
      `${run}: cold start ${r.coldStartMs} ms, peak RSS ${r.peakRssMb.toFixed(0)} MB, dispute RSS growth ${d ? (d.rssPeakDuringMb - d.rssBeforeMb).toFixed(0) : 'n/a'} MB` +
        (r.missingFixtures.length ? `; fixtures missing: ${r.missingFixtures.join('; ')}` : ''),
    );
  }
  // What each answered request cost (per payment in the payment scenarios).
  for (const run of RUN_NAMES) {
    for (const [name, r] of Object.entries(out.runs[run]?.scenarios ?? {})) if (r.perRequest) console.log(`${run}: ${name}: ${describeCost(r.perRequest)}`);
  }
  // The payment scenarios: what the payments ended as, and what the service's /metrics counted meanwhile.
  for (const run of RUN_NAMES) {
    for (const [name, r] of Object.entries(out.runs[run]?.scenarios ?? {})) {
      if (!r.payments) continue;
      const statuses = Object.entries(r.payments).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
      const o = r.orchestration;
      const calls = o ? Object.entries(o.providerCalls).map(([k, v]) => `${k} ${v}`).join(', ') || 'none recorded' : 'n/a (no /metrics)';
      console.log(`${run}: ${name}: payments ${statuses}; failed over ${o ? o.failovers : 'n/a'}; provider calls ${calls}`);
    }
  }
  // Tenant isolation: Y's GET latency alone, then during X's refund burst, and the ratio.
  for (const run of RUN_NAMES) {
    for (const [name, r] of Object.entries(out.runs[run]?.scenarios ?? {})) if (r.isolation) console.log(`${run}: ${name}: ${r.summary}`);
  }
  console.log(`load average before ${out.machine.loadAverage.map((v) => v.toFixed(1)).join(' ')}, after ${out.machine.loadAverageAfter.map((v) => v.toFixed(1)).join(' ')} (${out.machine.cpus} CPUs)`);
  const file = join(here, '..', 'bench-results.json');
  await writeFile(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`written ${file}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
