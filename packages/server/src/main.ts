#!/usr/bin/env node
/** The process entry: configuration from the environment, start, and graceful shutdown on SIGTERM/SIGINT. */
import { ConfigError, loadConfig } from './platform/config.js';
import { createLogger } from './platform/logger.js';
import { startServer } from './server.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const line of err.lines) console.error(line);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  const running = await startServer({ config, log });
  log.info(
    { url: `${running.url}/v1`, docs: `${running.url}/docs`, database: running.deps.db.kind, sandbox: config.sandbox },
    `payorch listening on ${running.url}/v1`,
  );

  const shutdown = (signal: string) => {
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    running.close().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Started by the designer's loop (tools/dev.mjs) with an IPC channel: it asks for a spec reload after a
  // spec-only change instead of a restart. Nothing else starts this process with one.
  if (process.send) {
    process.on('message', (message: unknown) => {
      if ((message as { type?: string } | null)?.type !== 'payorch:reload-spec') return;
      void running.reloadSpec().then(
        (outcome) => {
          log.info(outcome, outcome.reloaded ? 'spec reloaded' : 'spec not reloaded: restart needed');
          process.send?.({ type: 'payorch:spec-reloaded', ...outcome });
        },
        (err: unknown) => process.send?.({ type: 'payorch:spec-reloaded', reloaded: false, reason: String(err) }),
      );
    });
  }
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(`payorch failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
