/**
 * Real server processes: `node dist/main.js` spawned with its environment (docs/design.md §7), its URL read
 * from the "listening on" log line, its output kept line by line, stopped with a signal. And a fresh
 * PostgreSQL database per test file (processes cannot use the harness's per-suite schema: they
 * migrate the database's public schema), dropped afterwards.
 *
 * Needs dist/ (`npx turbo run build --filter=@payorch/server`; turbo builds it before `test` in CI).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { extract, type ExtractOptions } from 'tar-fs';
import { inject } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/postgres.js';
import { ADMIN_KEY } from './harness.js';

export const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface ServerProcess {
  pid: number;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** `${url}/v1` */
  baseUrl: string;
  /** Every line written to stdout and stderr so far. */
  lines: string[];
  /** Resolves with the exit code (null when a signal ended it) once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first line (already written or still to come) matching `re`; rejects at the deadline or exit. */
  waitForLine(re: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends the signal (SIGTERM by default) and resolves with the exit code once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** With `ipc`: sends a message and resolves with the first one back of `type` (rejects at the deadline). */
  request(message: { type: string }, type: string, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/**
 * Fills `<dataDir>/pglite` with the suite's migrated PGlite image (global-setup.ts), so a process on
 * PGlite opens an existing database instead of running initdb (~2 s instead of ~5-12 s of CPU). For
 * tests about something else than a first start; data-at-rest.test.ts keeps a fresh start under umask 000.
 */
export async function seedPgliteDataDir(dataDir: string): Promise<void> {
  const target = join(dataDir, 'pglite');
  await mkdir(target, { recursive: true, mode: 0o700 });
  // chown: false — as root, tar-fs would give the files the archive's owner.
  await pipeline(createReadStream(inject('pgliteImage')), extract(target, { chown: false } as ExtractOptions));
}

export interface ProcessOptions {
  /**
   * The PostgreSQL database; without it the process runs on PGlite in `dataDir` (a first start runs
   * initdb, ~5 s of CPU, unless `seedPgliteDataDir(dataDir)` put the migrated image there).
   */
  databaseUrl?: string;
  dataDir: string;
  /** The process's umask (e.g. 0o000 to prove its files do not depend on it); the runner's otherwise. */
  umask?: number;
  /** More variables, or overrides of the defaults below. */
  env?: Record<string, string>;
  /** How long to wait for the "listening" line. */
  startTimeoutMs?: number;
  /** Spawn it with an IPC channel, as the designer's loop (tools/dev.mjs) does. */
  ipc?: boolean;
}

/** Spawns the built server and resolves once it listens (rejects with its output if it exits first). */
export function startServerProcess(options: ProcessOptions): Promise<ServerProcess> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build the server first (npx turbo run build --filter=@payorch/server)`);
  // The runner's own settings must not leak in (a key or base URL of the environment would change the run).
  const { VAULT_ENCRYPTION_KEY: _k, PUBLIC_BASE_URL: _u, RATE_LIMIT_STORE: _s, DATABASE_URL: _d, ...inherited } = process.env;
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: options.dataDir,
    ...(options.databaseUrl !== undefined ? { DATABASE_URL: options.databaseUrl } : {}),
    SANDBOX: 'true',
    ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'info',
    VALIDATE_RESPONSES: 'true',
    RATE_LIMIT_PER_MINUTE: '0',
    DATABASE_POOL_SIZE: '10',
    ...options.env,
  };
  const child =
    options.umask === undefined
      ? spawn(process.execPath, [MAIN], { env, stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'] })
      : // The shell sets the umask and execs node in its place (same pid, so signals reach the server).
        spawn('/bin/sh', ['-c', `umask ${options.umask.toString(8).padStart(3, '0')} && exec "$0" "$@"`, process.execPath, MAIN], {
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
  const lines: string[] = [];
  const watchers = new Set<(line: string) => void>();
  const collect = (stream: NodeJS.ReadableStream) => {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      for (const line of parts.filter(Boolean)) {
        lines.push(line);
        for (const w of watchers) w(line);
      }
    });
  };
  collect(child.stdout!);
  collect(child.stderr!);
  let hasExited = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': by then every line the process wrote has been read.
    child.once('close', (code, signal) => {
      hasExited = true;
      resolve({ code, signal });
    }),
  );
  const tail = () => lines.slice(-30).join('\n');

  const waitForLine = (re: RegExp, timeoutMs = 30_000) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find((l) => re.test(l));
      if (seen !== undefined) return resolve(seen);
      const done = () => {
        clearTimeout(timer);
        watchers.delete(watch);
      };
      const watch = (line: string) => {
        if (!re.test(line)) return;
        done();
        resolve(line);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no line matching ${re} within ${timeoutMs} ms; output:\n${tail()}`));
      }, timeoutMs);
      watchers.add(watch);
      void exited.then(({ code, signal }) => {
        if (!watchers.has(watch)) return;
        done();
        reject(new Error(`the server exited (${code ?? signal}) before a line matching ${re}; output:\n${tail()}`));
      });
    });

  return waitForLine(/listening on http:\/\//, options.startTimeoutMs ?? 60_000).then(
    (line) => {
      const url = /listening on (http:\/\/[0-9.:]+)/.exec(line)![1]!;
      return {
        pid: child.pid!,
        url,
        baseUrl: `${url}/v1`,
        lines,
        exited,
        waitForLine,
        async stop(signal: NodeJS.Signals = 'SIGTERM') {
          if (!hasExited) child.kill(signal);
          return (await exited).code;
        },
        request(message: { type: string }, type: string, timeoutMs = 30_000) {
          return new Promise<Record<string, unknown>>((resolve, reject) => {
            const timer = setTimeout(() => (child.off('message', onMessage), reject(new Error(`no ${type} message within ${timeoutMs} ms`))), timeoutMs);
            const onMessage = (m: unknown) => {
              if ((m as { type?: string } | null)?.type !== type) return;
              clearTimeout(timer);
              child.off('message', onMessage);
              resolve(m as Record<string, unknown>);
            };
            child.on('message', onMessage);
            child.send(message);
          });
        },
      };
    },
    (err: unknown) => {
      if (!hasExited) child.kill('SIGKILL');
      throw err;
    },
  );
}

export interface ProcessDatabase {
  /** postgres://…/payorch_proc_<random> */
  url: string;
  /** A small pool on it, for the test's own checks. */
  db: Database;
  /** Closes the pool and drops the database (WITH (FORCE): a killed process's backends may linger). */
  drop(): Promise<void>;
}

/** A new, empty database on the suite's PostgreSQL server (DATABASE_URL). */
export async function createProcessDatabase(): Promise<ProcessDatabase> {
  const serverUrl = inject('postgresUrl');
  if (!serverUrl) throw new Error('process tests need DATABASE_URL');
  const name = `payorch_proc_${randomBytes(6).toString('hex')}`;
  const admin = await openPostgres(serverUrl, { max: 1 });
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openPostgres(url.toString(), { max: 4 });
  return {
    url: url.toString(),
    db,
    async drop() {
      await db.close();
      const a = await openPostgres(serverUrl, { max: 1 });
      try {
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.close();
      }
    },
  };
}
