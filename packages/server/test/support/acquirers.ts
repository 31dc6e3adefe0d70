/**
 * The sandbox acquirers as their own process (dist/providers/sandbox/acquirers-main.js), for tests that
 * SIGKILL the service: the acquirers' ledgers must outlive it. Needs the build.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const ACQUIRERS_MAIN = fileURLToPath(new URL('../../dist/providers/sandbox/acquirers-main.js', import.meta.url));

export interface AcquirersProcess {
  child: ChildProcess;
  urls: { SANDBOX_A_URL: string; SANDBOX_B_URL: string };
}

/** One operation as an acquirer's `GET /_sandbox/ledger` lists it (never a card number). */
export interface LedgerEntry {
  reference: string;
  payment_id: string | null;
  kind: string;
  status: string;
  amount: { value: string; currency: string };
}

/**
 * Starts the acquirers and resolves with the URLs they print on their first line. Their ledgers are in
 * their memory unless `databaseUrl` names a database of the test's own: the runner's DATABASE_URL is not
 * passed on (they would migrate and write the shared database's public schema, not the test's).
 */
export async function startAcquirersProcess(options: { databaseUrl?: string } = {}): Promise<AcquirersProcess> {
  const { DATABASE_URL: _d, ...inherited } = process.env;
  const env = { ...inherited, ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}) };
  const child = spawn(process.execPath, [ACQUIRERS_MAIN], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    child.once('exit', (code) => reject(new Error(`acquirers-main exited with ${code}`)));
  });
  return { child, urls: JSON.parse(line) as AcquirersProcess['urls'] };
}

export async function ledgerOf(acquirerUrl: string): Promise<LedgerEntry[]> {
  return ((await (await fetch(`${acquirerUrl}/_sandbox/ledger`)).json()) as { operations: LedgerEntry[] }).operations;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns true or the deadline passes (the caller's expects then show the state). */
export async function until(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await sleep(200);
}

/** What a service process needs to use these acquirers, with a quick reconciliation pace for the tests. */
export function serviceEnv(urls: AcquirersProcess['urls']): Record<string, string> {
  return { SANDBOX_A_URL: urls.SANDBOX_A_URL, SANDBOX_B_URL: urls.SANDBOX_B_URL, RECONCILIATION_INTERVAL_MS: '200' };
}

/** A merchant's request to a service process (JSON body when given). */
export function merchantCall(
  baseUrl: string,
  creds: { public_api_key: string; private_secret_key: string },
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      'public-api-key': creds.public_api_key,
      'private-secret-key': creds.private_secret_key,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** The answer's JSON, after checking its status (the body is the assertion's message when it differs). */
export async function jsonOf<T>(res: Promise<Response>, status: number): Promise<T> {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(status);
  return JSON.parse(text) as T;
}

/** Sets (or with null clears) an acquirer's fault mode. */
export function setFaults(acquirerUrl: string, body: unknown | null): Promise<Response> {
  return fetch(
    `${acquirerUrl}/_sandbox/faults`,
    body === null ? { method: 'DELETE' } : { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
  );
}
