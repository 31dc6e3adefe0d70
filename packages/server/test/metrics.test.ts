/**
 * GET /metrics (tenancy/metrics-endpoint.ts, platform/prometheus.ts): the Prometheus exposition behind
 * METRICS_TOKEN. Requests are counted by operationId and status (never by path), the webhook queue is read
 * from the database at scrape time, and the orchestration series appear once domain code records them.
 */
import type { Schemas } from '@payorch/types';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../src/webhooks/events.js';
import { backends, startTestServer, useServer, type TestServer } from './support/harness.js';
import spec from '@payorch/types/openapi.json' with { type: 'json' };

const TOKEN = 'metrics-token-0123456789abcdef0123456789';
const payment = (spec as unknown as { components: { examples: Record<string, { value: unknown }> } }).components.examples.PaymentCreated!
  .value as Schemas['Payment'];

function metricsUrl(t: TestServer): string {
  return `${t.running.url}/metrics`;
}

async function scrape(t: TestServer): Promise<string> {
  const res = await fetch(metricsUrl(t), { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return res.text();
}

/** The exposition's samples, `name{labels}` → value, after checking every line is a comment or a sample. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/i.exec(line);
    expect(m, `not an exposition line: ${line}`).not.toBeNull();
    out.set(m![1]!, Number(m![2]));
  }
  return out;
}

for (const backend of backends()) {
  describe(`GET /metrics (${backend})`, () => {
    const t = useServer(backend, { env: { METRICS_TOKEN: TOKEN } });
    beforeAll(() => t.rememberSecret(TOKEN, 'METRICS_TOKEN'));

    it('refuses a scrape without the token, or with another one (401, WWW-Authenticate: Bearer), and reads nothing', async () => {
      const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer not-the-token' }, { authorization: TOKEN }, { 'admin-api-key': TOKEN }];
      for (const headers of attempts) {
        const res = await fetch(metricsUrl(t), { headers });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
        expect(res.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
        expect(await res.json()).toMatchObject({ code: 'INVALID_CREDENTIALS' });
      }
    });

    it('counts requests by operationId, method and status, never by path; unknown routes as unmatched', async () => {
      expect((await t.fetch('/payments/00000000-0000-4000-8000-000000000000')).status).toBe(404);
      expect((await t.fetch('/healthz')).status).toBe(200);
      expect((await t.fetch('/no/such/route')).status).toBe(404);
      const text = await scrape(t);
      const s = samples(text);
      expect(s.get('payorch_http_requests_total{operation="getPayment",method="GET",status="404"}')).toBe(1);
      expect(s.get('payorch_http_requests_total{operation="unmatched",method="GET",status="404"}')).toBe(1);
      expect(s.get('payorch_http_requests_total{operation="getHealth",method="GET",status="200"}')).toBeGreaterThanOrEqual(1);
      // The refused scrapes of the test before, under the endpoint's own fixed name.
      expect(s.get('payorch_http_requests_total{operation="metrics",method="GET",status="401"}')).toBeGreaterThanOrEqual(4);
      expect(s.get('payorch_http_request_duration_seconds_count{operation="getPayment"}')).toBe(1);
      expect(s.get('payorch_http_request_duration_seconds_bucket{le="+Inf",operation="getPayment"}')).toBe(1);
      expect(text).toContain('# TYPE payorch_http_requests_total counter\n');
      expect(text).toContain('# TYPE payorch_http_request_duration_seconds histogram\n');
      // The database adapter's own counts (db/counters.ts), as the benchmark reads them: the requests above read.
      expect(text).toContain('# TYPE payorch_db_commits_total counter\n');
      expect(s.get('payorch_db_statements_total{scope="request"}')).toBeGreaterThan(0);
      expect(s.get('payorch_db_statements_total{scope="background"}')).toBeGreaterThan(0);
      expect(text).not.toContain('00000000-0000-4000-8000-000000000000');
      // Process metrics come along (collectDefaultMetrics).
      expect(s.has('process_cpu_user_seconds_total')).toBe(true);
      expect(s.has('nodejs_eventloop_lag_seconds')).toBe(true);
    });

    it('reads the webhook queue at scrape time: due and scheduled deliveries, and the age of the oldest due one', async () => {
      // The server's worker would deliver (or fail) what is queued: it stays off here.
      await t.running.deps.services.webhooks.worker.stop();
      const before = samples(await scrape(t));
      expect(before.get('payorch_webhook_queue_depth{state="due"}')).toBe(0);
      expect(before.get('payorch_webhook_queue_depth{state="scheduled"}')).toBe(0);
      expect(before.get('payorch_webhook_oldest_due_seconds')).toBe(0);

      const res = await t.fetch('/webhook-endpoints', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/hooks', events: ['payment.succeeded'] }),
      });
      expect(res.status).toBe(201);
      const emit = () =>
        t.db.transaction((tx) =>
          recordEvent(tx, { organizationId: t.sandbox.organization_id, accountId: t.sandbox.account_id, type: 'payment.succeeded', data: { payment }, resourceId: payment.id }),
        );
      const first = await emit();
      const second = await emit();
      expect(first.deliveries + second.deliveries).toBe(2);
      // One due for two minutes, one waiting for a retry in an hour.
      await t.db.query("UPDATE webhook_deliveries SET next_attempt_at = clock_timestamp() - interval '120 seconds' WHERE event_id = $1", [first.eventId]);
      await t.db.query("UPDATE webhook_deliveries SET next_attempt_at = clock_timestamp() + interval '1 hour' WHERE event_id = $1", [second.eventId]);

      const after = samples(await scrape(t));
      expect(after.get('payorch_webhook_queue_depth{state="due"}')).toBe(1);
      expect(after.get('payorch_webhook_queue_depth{state="scheduled"}')).toBe(1);
      expect(after.get('payorch_webhook_oldest_due_seconds')).toBeGreaterThanOrEqual(120);
      expect(after.get('payorch_webhook_oldest_due_seconds')).toBeLessThan(3600);

      await t.db.query("UPDATE webhook_deliveries SET status = 'CANCELED' WHERE status = 'PENDING'");
      const drained = samples(await scrape(t));
      expect(drained.get('payorch_webhook_queue_depth{state="due"}')).toBe(0);
      expect(drained.get('payorch_webhook_oldest_due_seconds')).toBe(0);
    });

    it('shows provider calls, circuit states, failovers and the reconciliation backlog as the orchestration records them', async () => {
      const metrics = t.running.deps.services.metrics;
      const before = await scrape(t);
      expect(before).not.toContain('payorch_provider_calls_total{');
      expect(before).not.toContain('payorch_failovers_total{');

      metrics.providerCall({ providerId: 'SANDBOX_A', connectionId: 'conn-a', operation: 'purchase', outcome: 'ERROR' }, 0.02);
      metrics.providerCall({ providerId: 'SANDBOX_B', connectionId: 'conn-b', operation: 'purchase', outcome: 'SUCCEEDED' }, 0.03);
      metrics.providerCall({ providerId: 'SANDBOX_B', connectionId: 'conn-b', operation: 'purchase', outcome: 'SUCCEEDED' }, 0.04);
      metrics.circuitState({ providerId: 'SANDBOX_A', connectionId: 'conn-a' }, 'OPEN');
      metrics.circuitState({ providerId: 'SANDBOX_B', connectionId: 'conn-b' }, 'CLOSED');
      metrics.circuitState({ providerId: 'SANDBOX_B', connectionId: 'conn-c' }, 'HALF_OPEN');
      metrics.failover({ fromProviderId: 'SANDBOX_A', toProviderId: 'SANDBOX_B', reason: 'ERROR' });
      metrics.reconciliationBacklog(3, 42.5);

      const text = await scrape(t);
      for (const line of [
        'payorch_provider_calls_total{provider="SANDBOX_A",connection="conn-a",operation="purchase",outcome="ERROR"} 1',
        'payorch_provider_calls_total{provider="SANDBOX_B",connection="conn-b",operation="purchase",outcome="SUCCEEDED"} 2',
        'payorch_provider_call_duration_seconds_count{provider="SANDBOX_B",operation="purchase"} 2',
        'payorch_provider_call_duration_seconds_bucket{le="0.05",provider="SANDBOX_B",operation="purchase"} 2',
        'payorch_provider_call_duration_seconds_bucket{le="0.025",provider="SANDBOX_B",operation="purchase"} 0',
        '# HELP payorch_circuit_state A connection\'s circuit breaker: 0 closed (calls go through), 1 half-open (probing), 2 open (skipped until its cool-down ends).',
        '# TYPE payorch_circuit_state gauge',
        'payorch_circuit_state{provider="SANDBOX_A",connection="conn-a"} 2',
        'payorch_circuit_state{provider="SANDBOX_B",connection="conn-b"} 0',
        'payorch_circuit_state{provider="SANDBOX_B",connection="conn-c"} 1',
        'payorch_failovers_total{from="SANDBOX_A",to="SANDBOX_B",reason="ERROR"} 1',
        'payorch_reconciliation_backlog 3',
        'payorch_reconciliation_oldest_seconds 42.5',
      ]) {
        expect(text.split('\n')).toContain(line);
      }
      samples(text);
    });
  });

  describe(`GET /metrics without METRICS_TOKEN (${backend})`, () => {
    it('does not exist: 404, whatever credentials come', async () => {
      const t = await startTestServer(backend);
      try {
        const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer anything' }];
        for (const headers of attempts) {
          const res = await fetch(`${t.running.url}/metrics`, { headers });
          expect(res.status).toBe(404);
          expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
        }
      } finally {
        await t.stop();
      }
    });
  });
}
