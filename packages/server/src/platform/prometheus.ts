/**
 * The prom-client implementation of what the service reports (GET /metrics): one Registry per server, so
 * several servers in one process (the tests) keep their own figures. Process metrics (CPU, memory, event
 * loop, GC) describe the process, not a server: they live in one registry per process, collected once and
 * merged into every exposition (collectDefaultMetrics per server would start an event-loop monitor and a GC
 * observer per server and never stop them).
 *
 * Labels are bounded by construction: operations are the spec's operationIds (never a path: ids in paths
 * would make one series per payment), methods are the few HTTP parses, statuses the codes the service
 * answers, providers the registry's, outcomes and operations the fixed lists of metrics.ts, failover
 * reasons the failover table's list (orchestration/failover.ts FAILOVER_REASONS): anything else is
 * counted as OTHER here, at the sink, so no value a provider or a client sends can become a series.
 * Connections are labelled too: a connection is a configured object (an operator or merchant creates it;
 * an organization has a handful), not a per-request value, so the series grow with the configured estate
 * like per-instance labels do, and the circuit breaker is per connection: an operator must see which one
 * is open.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { labelFrom, PROVIDER_CALL_OUTCOMES, PROVIDER_OPERATIONS, type CircuitState, type OrchestrationMetrics, type ProviderCallOutcome } from './metrics.js';

/** The webhook delivery queue as read at scrape time (webhooks/repository.ts queueStats). */
export interface WebhookQueueStats {
  /** Pending deliveries due now (counted up to a cap: see the repository). */
  due: number;
  /** Pending deliveries waiting for a later retry. */
  scheduled: number;
  /** How long the oldest due delivery has been due, in seconds (0 when none is due). */
  oldestDueSeconds: number;
}

export interface PrometheusMetricsOptions {
  /** Read at each scrape (one bounded, indexed query); an error leaves the gauges at their last value. */
  webhookQueue?: () => Promise<WebhookQueueStats>;
  /** Told when the scrape-time query fails (the scrape still answers). */
  onCollectError?: (err: unknown) => void;
  /** The failover reasons counted by name (FAILOVER_REASONS); any other is OTHER. Unset: only OTHER. */
  failoverReasons?: readonly string[];
  /** The database adapter's own counts (db/counters.ts), exposed as they are at scrape time. */
  database?: DatabaseCountsReading;
}

/** What the database adapters count (db/counters.ts, per API request and background work), as exposed here. */
export interface DatabaseCounts {
  /** Statements the code sent (query and exec). */
  statements: number;
  /** Everything sent to the server: statements, BEGIN, COMMIT / ROLLBACK, savepoints. */
  roundTrips: number;
  /** Transactions that wrote and committed, plus writes that committed on their own. */
  commits: number;
  /** Transactions begun (read-only ones included). */
  transactions: number;
  /** Transactions rolled back (a business refusal that wrote nothing, a lost race, a failure). */
  rollbacks: number;
}

/**
 * The database adapter's counts as the scrape reads them: declared here, implemented by db/counters.ts
 * (DatabaseCounters), because the database layer sits on platform (configuration, the request scope) and
 * platform imports nothing of it.
 */
export interface DatabaseCountsReading {
  readonly request: Readonly<DatabaseCounts>;
  readonly background: Readonly<DatabaseCounts>;
}

const OUTCOMES: ReadonlySet<string> = new Set(PROVIDER_CALL_OUTCOMES);
const OPERATIONS: ReadonlySet<string> = new Set(PROVIDER_OPERATIONS);

const CIRCUIT_VALUE: Record<CircuitState, number> = { CLOSED: 0, HALF_OPEN: 1, OPEN: 2 };

/** Request latencies: 5 ms to 10 s. Provider calls add 30 s (a connection's timeout can be that long). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const PROVIDER_BUCKETS = [...HTTP_BUCKETS, 30];

let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * What the service sent its database (statements, round trips, commits, rollbacks), for API requests and
 * for background work apart; copied from the adapter's counts at each scrape (the benchmark divides them by
 * the payments made).
 */
function databaseCounters(registry: Registry, counts: DatabaseCountsReading): void {
  const fields: [keyof DatabaseCounts, string, string][] = [
    ['statements', 'payorch_db_statements_total', 'Statements sent to the database'],
    ['roundTrips', 'payorch_db_round_trips_total', 'Round trips to the database: statements plus BEGIN, COMMIT or ROLLBACK and savepoints'],
    ['commits', 'payorch_db_commits_total', 'Commits that made something durable: transactions that wrote, plus writes sent on their own'],
    ['transactions', 'payorch_db_transactions_total', 'Transactions begun (read-only ones included)'],
    ['rollbacks', 'payorch_db_rollbacks_total', 'Transactions rolled back'],
  ];
  for (const [field, name, help] of fields) {
    new Counter({
      name,
      help: `${help}, by scope (request: for an API request; background: workers, start-up).`,
      labelNames: ['scope'] as const,
      registers: [registry],
      collect() {
        this.reset();
        this.inc({ scope: 'request' }, counts.request[field]);
        this.inc({ scope: 'background' }, counts.background[field]);
      },
    });
  }
}

export class PrometheusMetrics implements OrchestrationMetrics {
  readonly registry = new Registry();

  private readonly httpRequests = new Counter({
    name: 'payorch_http_requests_total',
    help: 'HTTP requests answered, by the operationId of the spec (unmatched: no operation), method and status (aborted: the client went away first).',
    labelNames: ['operation', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'payorch_http_request_duration_seconds',
    help: 'Time from the request arriving to its response finishing, by operationId.',
    labelNames: ['operation'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });
  private readonly providerCalls = new Counter({
    name: 'payorch_provider_calls_total',
    help: 'Calls to providers, by provider, connection, operation and outcome (SUCCEEDED, DECLINED, ERROR, NOT_SENT, TIMEOUT, CONNECTION_CUT, BAD_RESPONSE).',
    labelNames: ['provider', 'connection', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly providerDuration = new Histogram({
    name: 'payorch_provider_call_duration_seconds',
    help: 'Duration of provider calls, by provider and operation.',
    labelNames: ['provider', 'operation'] as const,
    buckets: PROVIDER_BUCKETS,
    registers: [this.registry],
  });
  private readonly circuit = new Gauge({
    name: 'payorch_circuit_state',
    help: "A connection's circuit breaker: 0 closed (calls go through), 1 half-open (probing), 2 open (skipped until its cool-down ends).",
    labelNames: ['provider', 'connection'] as const,
    registers: [this.registry],
  });
  private readonly failovers = new Counter({
    name: 'payorch_failovers_total',
    help: 'Payments moved on to the next step of their route after a soft failure, by provider left, provider tried next and reason.',
    labelNames: ['from', 'to', 'reason'] as const,
    registers: [this.registry],
  });
  private readonly reconciliationCount = new Gauge({
    name: 'payorch_reconciliation_backlog',
    help: 'Provider calls with an unknown outcome the reconciliation worker has yet to settle (after its last pass).',
    registers: [this.registry],
  });
  private readonly reconciliationOldest = new Gauge({
    name: 'payorch_reconciliation_oldest_seconds',
    help: 'Age of the oldest provider call awaiting reconciliation, in seconds (0 when none), after the worker\'s last pass.',
    registers: [this.registry],
  });

  private readonly failoverReasons: ReadonlySet<string>;

  constructor(options: PrometheusMetricsOptions = {}) {
    const { webhookQueue, onCollectError } = options;
    this.failoverReasons = new Set(options.failoverReasons ?? []);
    if (options.database) databaseCounters(this.registry, options.database);
    if (!webhookQueue) return;
    // One query per scrape feeds both gauges: prom-client runs every collect() of a scrape together, so
    // the first starts the query and the second shares it; it is forgotten once the scrape has it.
    let reading: Promise<WebhookQueueStats | undefined> | undefined;
    const read = () => {
      reading ??= webhookQueue()
        .catch((err: unknown) => {
          onCollectError?.(err);
          return undefined;
        })
        .finally(() => setImmediate(() => (reading = undefined)));
      return reading;
    };
    new Gauge({
      name: 'payorch_webhook_queue_depth',
      help: 'Pending webhook deliveries: due (waiting for the worker) or scheduled (waiting for a later retry). Read from the database at scrape time.',
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        const stats = await read();
        if (!stats) return;
        this.set({ state: 'due' }, stats.due);
        this.set({ state: 'scheduled' }, stats.scheduled);
      },
    });
    new Gauge({
      name: 'payorch_webhook_oldest_due_seconds',
      help: 'How long the oldest due webhook delivery has been waiting, in seconds (0 when none is due). Read at scrape time.',
      registers: [this.registry],
      async collect() {
        const stats = await read();
        if (stats) this.set(stats.oldestDueSeconds);
      },
    });
  }

  /** One answered (or abandoned) request; `operation` is the operationId or 'unmatched'. */
  httpRequest(labels: { operation: string; method: string; status: string }, seconds: number): void {
    this.httpRequests.inc(labels);
    this.httpDuration.observe({ operation: labels.operation }, seconds);
  }

  providerCall(labels: { providerId: string; connectionId: string; operation: string; outcome: ProviderCallOutcome }, seconds: number): void {
    const operation = labelFrom(labels.operation, OPERATIONS);
    this.providerCalls.inc({ provider: labels.providerId, connection: labels.connectionId, operation, outcome: labelFrom(labels.outcome, OUTCOMES) });
    this.providerDuration.observe({ provider: labels.providerId, operation }, seconds);
  }

  circuitState(labels: { providerId: string; connectionId: string }, state: CircuitState): void {
    this.circuit.set({ provider: labels.providerId, connection: labels.connectionId }, CIRCUIT_VALUE[state]);
  }

  failover(labels: { fromProviderId: string; toProviderId: string; reason: string }): void {
    this.failovers.inc({ from: labels.fromProviderId, to: labels.toProviderId, reason: labelFrom(labels.reason, this.failoverReasons) });
  }

  reconciliationBacklog(count: number, oldestAgeSeconds: number): void {
    this.reconciliationCount.set(count);
    this.reconciliationOldest.set(oldestAgeSeconds);
  }

  /** The exposition: this server's series, then the process's. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    const merged = Registry.merge([this.registry, processMetrics()]);
    return { contentType: merged.contentType, body: await merged.metrics() };
  }
}
