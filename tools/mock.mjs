#!/usr/bin/env node
// `npm run mock`: a mock of the API from the bundled spec (packages/types/openapi.json) with Prism, so
// client work can start before the handlers exist. It answers the spec's examples (or generated data
// with --dynamic), validates requests the way the spec says (400/401 with the spec's problem
// examples), and lets a caller pick a documented answer with `Prefer: code=409` or
// `Prefer: example=<name>`.
//   node tools/mock.mjs [--port 4010] [--host 127.0.0.1] [--dynamic] [--seed <seed>]
//   environment: MOCK_PORT, MOCK_HOST
// Base address: http://127.0.0.1:4010/v1, the same path as the real service. (Prism ignores a relative
// `servers` URL, so the mock is served from a copy of the spec whose paths carry the /v1 prefix.)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const defaultSpec = join(root, 'packages/types/openapi.json');

/** The bundled spec with the servers' base path moved into every path (what Prism routes on). */
export function mockableSpec(spec) {
  const base = new URL(spec.servers?.[0]?.url ?? '/', 'http://base').pathname.replace(/\/+$/, '');
  return {
    ...spec,
    servers: [{ url: '/' }],
    paths: Object.fromEntries(Object.entries(spec.paths ?? {}).map(([path, item]) => [`${base}${path}`, item])),
  };
}

function prismBin() {
  const pkgFile = require.resolve('@stoplight/prism-cli/package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
  return join(dirname(pkgFile), typeof pkg.bin === 'string' ? pkg.bin : pkg.bin.prism);
}

/**
 * Starts Prism; resolves once it listens.
 * @param {{ port?: number, host?: string, dynamic?: boolean, seed?: string, specFile?: string, stdio?: 'inherit' | 'pipe' }} [options]
 */
export function startMock({ port = 4010, host = '127.0.0.1', dynamic = false, seed, specFile = defaultSpec, stdio = 'pipe' } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'payorch-mock-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(mockableSpec(JSON.parse(readFileSync(specFile, 'utf8')))));
  const args = [prismBin(), 'mock', file, '--host', host, '--port', String(port)];
  if (dynamic) args.push('--dynamic');
  if (seed !== undefined) args.push('--seed', seed);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  child.once('exit', cleanup);
  const url = `http://${host}:${port}/v1`;
  const ready = new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk) => {
      if (stdio === 'inherit') process.stdout.write(chunk);
      output += chunk.toString();
      if (/Prism is listening/.test(output)) resolve(undefined);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => {
      if (stdio === 'inherit') process.stderr.write(chunk);
      output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`prism exited with ${code} before listening:\n${output.slice(-2000)}`)));
  });
  return {
    url,
    child,
    ready,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
        child.once('exit', () => resolve(undefined));
        child.kill('SIGTERM');
      }),
  };
}

function parseArgs(argv) {
  const args = { port: Number(process.env.MOCK_PORT ?? 4010), host: process.env.MOCK_HOST ?? '127.0.0.1', dynamic: false, seed: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--port' || a === '-p') args.port = Number(argv[++i]);
    else if (a === '--host' || a === '-h') args.host = argv[++i];
    else if (a === '--dynamic' || a === '-d') args.dynamic = true;
    else if (a === '--seed') args.seed = argv[++i];
    else throw new Error(`unknown argument ${a} (usage: mock.mjs [--port N] [--host H] [--dynamic] [--seed S])`);
  }
  if (!Number.isInteger(args.port) || args.port < 1 || args.port > 65535) throw new Error('--port (MOCK_PORT) must be a port number');
  return args;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const args = parseArgs(process.argv.slice(2));
    const mock = startMock({ ...args, stdio: 'inherit' });
    for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void mock.stop().then(() => process.exit(0)));
    mock.child.once('exit', (code) => process.exit(code ?? 0));
    await mock.ready;
    console.log(`\nMock payorch API (Prism, ${args.dynamic ? 'generated data' : 'the spec’s examples'}) at ${mock.url}`);
    console.log(`Try: curl -s -X POST ${mock.url}/customers -H 'public-api-key: pk' -H 'private-secret-key: sk' -H 'content-type: application/json' -d '{"merchant_customer_id":"cus-1"}'`);
  } catch (err) {
    console.error(`mock: ${err.message ?? err}`);
    process.exit(1);
  }
}
