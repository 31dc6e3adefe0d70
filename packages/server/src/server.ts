/**
 * Starting and stopping the service: open the database, migrate, bootstrap the sandbox, build the app,
 * listen, and make sure the spec compiled (a broken spec fails the start, not the first request).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import type { AppDeps } from './context.js';
import type { Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { openDatabase } from './db/open.js';
import { gateByOrganization, gateOptionsFor } from './db/organization-gate.js';
import { ConfigError, PUBLIC_BASE_URL_REQUIRED, type Config } from './platform/config.js';
import { createLogger, type Logger } from './platform/logger.js';
import { factsFixedAtLoad, reloadSpec, type SpecReload } from './http/spec-reload.js';
import { loadSpec } from './http/spec.js';
import { buildServices } from './services.js';
import { bootstrapSandbox } from './tenancy/sandbox-bootstrap.js';

export interface RunningServer {
  url: string;
  deps: AppDeps;
  server: Server;
  /** Stop accepting, let in-flight requests finish, then close the database (unless it was given). */
  close(): Promise<void>;
  /**
   * The designer's loop: serve the spec file as it is now, without a restart, when only the spec changed
   * (http/spec-reload.ts says when a restart is needed instead). Requests under way finish on the old app.
   */
  reloadSpec(): Promise<SpecReload>;
}

export interface StartOptions {
  config: Config;
  log?: Logger;
  /** An already open database (tests); it is then not closed by close(). */
  db?: Database;
  /** Tests only: shorter slow-client cut-offs, so a test of the 408 does not wait the production 10 s. */
  httpTimeouts?: Partial<HttpTimeouts>;
}

/** How long a client may take to send its headers / its whole request before it gets 408. */
export interface HttpTimeouts {
  headersMs: number;
  requestMs: number;
}
export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { headersMs: 10_000, requestMs: 30_000 };

export async function startServer(options: StartOptions): Promise<RunningServer> {
  // Our own copy: the sandbox's default PUBLIC_BASE_URL is only known once the port is bound.
  const config: Config = { ...options.config };
  if (!config.sandbox && config.publicBaseUrl === undefined) throw new ConfigError([PUBLIC_BASE_URL_REQUIRED]);
  const log = options.log ?? createLogger(config.logLevel);
  const ownsDb = !options.db;
  const opened = options.db ?? (await openDatabase(config));
  // Everything the service does goes through the per-organization bound (requests of an organization only).
  const db = gateByOrganization(opened, gateOptionsFor(config.databasePoolSize));
  const closeHooks: (() => Promise<void>)[] = [];
  try {
    const applied = await migrate(db);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    const services = await buildServices({ db, config, log, onClose: (hook) => closeHooks.push(hook) });
    // After the services: the sandbox organization's connection credentials are sealed with the vault keyring.
    if (config.sandbox) await bootstrapSandbox(db, config.dataDir, log, services.sandboxDefaults);
    const deps: AppDeps = { db, config, log, services };
    // Read on the first reload only (a production server never reloads), while the spec the modules
    // loaded is still the one in the require cache: reloadSpec replaces it.
    let factsAtStart: string | undefined;
    let app = createApp(deps);

    // Slow or stalled clients must not hold sockets forever; the timeouts are enforced every second.
    const timeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...options.httpTimeouts };
    const server = createServer(
      { headersTimeout: timeouts.headersMs, requestTimeout: timeouts.requestMs, keepAliveTimeout: 5_000, connectionsCheckingInterval: 1_000 },
      (req, res) => app(req, res),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    // Links are built from the configured address only (loadConfig requires it outside sandbox mode).
    if (config.sandbox) config.publicBaseUrl ??= url;

    // Compile the spec now: express-openapi-validator loads it lazily on the first request.
    const warm = await fetch(`${url}/v1/healthz`);
    if (warm.status !== 200) {
      server.close();
      throw new Error(`the API did not start cleanly: /v1/healthz answered ${warm.status}`);
    }

    let closing: Promise<void> | undefined;
    return {
      url,
      deps,
      server,
      reloadSpec: () =>
        reloadSpec((factsAtStart ??= factsFixedAtLoad(loadSpec())), async () => {
          const previous = app;
          app = createApp(deps);
          // As at the start: the validator compiles the spec on the first request; a spec it cannot use
          // leaves the previous app answering.
          const check = await fetch(`${url}/v1/healthz`).catch(() => undefined);
          if (check?.status !== 200) {
            app = previous;
            throw new Error(`the reloaded API did not answer /v1/healthz (${check?.status ?? 'no answer'})`);
          }
        }),
      close() {
        closing ??= (async () => {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
          });
          // Background work (outbox workers) stops before the database goes away.
          for (const hook of closeHooks.reverse()) await hook().catch((err: unknown) => log.error({ err }, 'close hook failed'));
          if (ownsDb) await opened.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    for (const hook of closeHooks.reverse()) await hook().catch(() => {});
    if (ownsDb) await opened.close().catch(() => {});
    throw err;
  }
}
