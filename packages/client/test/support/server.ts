/**
 * A real payorch server for the client's behaviour tests, run the way integrators run it: the built
 * `packages/server/dist/main.js` as a child process on PGlite in a temporary DATA_DIR, sandbox mode, on a
 * port the OS picks (the URL is read from its "payorch listening on …" log line). The client does not
 * depend on @payorch/server; only these tests use its build output.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const WORKSPACE_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../..');
export const SERVER_DIR = join(WORKSPACE_ROOT, 'packages/server');
export const SERVER_MAIN = join(SERVER_DIR, 'dist/main.js');
export const ADMIN_API_KEY = 'client-tests-admin-key-0123456789abcdef';

export interface SandboxCredentials {
  organization_id: string;
  name: string;
  pci_certified: boolean;
  account_id: string;
  public_api_key: string;
  private_secret_key: string;
}

export interface ServerInfo {
  /** e.g. http://127.0.0.1:41234/v1 */
  baseUrl: string;
  adminApiKey: string;
  /** The sandbox organization (PCI certified) the server creates at first start. */
  sandbox: SandboxCredentials;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Runs `tsc -p <tsconfig>` unless `output` is newer than every file under `sourceDirs` and `inputs`. */
export function buildIfStale(tsconfig: string, output: string, sourceDirs: string[], inputs: string[] = [], log: (line: string) => void = console.warn): void {
  const sources = Math.max(...sourceDirs.map(newestMtime), ...inputs.map((f) => statSync(f).mtimeMs));
  if (existsSync(output) && statSync(output).mtimeMs >= sources) return;
  const tsc = join(WORKSPACE_ROOT, 'node_modules/typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', tsconfig], { encoding: 'utf8' });
  if (result.status !== 0) {
    // tsc still emits on type errors (work in progress elsewhere); running the output decides.
    log(`${tsconfig} built with errors (continuing with what was emitted):\n${(result.stdout + result.stderr).split('\n').slice(0, 10).join('\n')}`);
  }
  if (!existsSync(output)) throw new Error(`building ${tsconfig} did not produce ${output}`);
}

/** The server's build (`npm run build -w @payorch/server` runs the same tsc), when its sources changed. */
export function buildServerIfStale(): void {
  buildIfStale(join(SERVER_DIR, 'tsconfig.build.json'), SERVER_MAIN, [join(SERVER_DIR, 'src')], [join(WORKSPACE_ROOT, 'packages/types/openapi.json')]);
}

export interface RunningServer extends ServerInfo {
  child: ChildProcess;
  dataDir: string;
  /** Every JSON log line the server printed. */
  logs: string[];
  stop(): Promise<void>;
}

/** Starts `node packages/server/dist/main.js` and resolves once it listens. */
export async function startServer(env: Record<string, string> = {}): Promise<RunningServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'payorch-client-test-'));
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  const child = spawn(process.execPath, [SERVER_MAIN], {
    cwd: SERVER_DIR,
    env: {
      ...inherited,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      SANDBOX: 'true',
      ADMIN_API_KEY,
      LOG_LEVEL: 'info',
      VALIDATE_RESPONSES: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));

  const baseUrl = await new Promise<string>((resolveUrl, reject) => {
    // A first start runs initdb (seconds of CPU), beside other test tasks on a shared machine: this only catches a hang.
    // A server that never said it listens is killed with the failure: nothing may outlive the run.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not start within 180 s:\n${logs.join('\n')}\n${stderr}`));
    }, 180_000);
    let buffered = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines.filter(Boolean)) {
        logs.push(line);
        const url = /payorch listening on (https?:\/\/[^"\s]+)/.exec(line)?.[1];
        if (url) {
          clearTimeout(timer);
          resolveUrl(url);
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with code ${code} before listening:\n${logs.join('\n')}\n${stderr}`));
    });
  });

  const sandbox = JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as SandboxCredentials;
  return {
    baseUrl,
    adminApiKey: ADMIN_API_KEY,
    sandbox,
    child,
    dataDir,
    logs,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killer);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
