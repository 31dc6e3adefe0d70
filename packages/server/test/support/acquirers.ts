/**
 * The sandbox acquirers as their own process (dist/providers/sandbox/acquirers-main.js), for tests that
 * SIGKILL the service: the acquirers' ledgers must outlive it. Needs the build.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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

/** Starts the acquirers and resolves with the URLs they print on their first line. */
export async function startAcquirersProcess(): Promise<AcquirersProcess> {
  const child = spawn(process.execPath, [ACQUIRERS_MAIN], { stdio: ['ignore', 'pipe', 'inherit'] });
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
