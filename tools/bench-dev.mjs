#!/usr/bin/env node
// `npm run bench:dev`: the designer's loop and `npm start`, timed on this machine, printed (never a test).
//   1. `npm run dev` (tools/dev.mjs) from start to the server answering;
//   2. a valid spec save (a description in spec/components/schemas/Customer.yaml) → the restarted server
//      serves the change at GET /openapi.json;
//   3. an invalid save → the loop shows the first error: a lint error (a string without maxLength) and a
//      new required property of Customer (the spec's examples lack it: Spectral reports that first,
//      while the type-check, running beside it, finds that the server's mapper does not set it), and a
//      code save in packages/server/src that does not type-check (what only the type-check can find);
//   4. `npm start` on the up-to-date tree → GET /v1/healthz answers.
// Each edit is undone (the file's exact text is written back, and the loop's run after it awaited), so the
// tree is as it was. The server's data goes to a scratch DATA_DIR. BENCH_RUNS (default 3) saves of each
// kind and starts; medians are printed with every sample and the load average (the machine is shared).
// BENCH_DEV_ECHO=1 shows the output of the loop and of npm start (on stderr) while it runs.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TIMEOUT_MS = 600_000;
const target = join(root, 'spec/components/schemas/Customer.yaml');
/** A server source the type-error case edits (a code save: no lint, the type-check reports it). */
const codeTarget = join(root, 'packages/server/src/customers/mapper.ts');

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Polls `url` until `accept(status, body)`; resolves the moment it did. */
async function until(url, accept, deadline = Date.now() + TIMEOUT_MS) {
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (accept(res.status, await res.text())) return Date.now();
    } catch {
      // not listening (yet)
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${url}`);
}

/** Resolves once nothing answers on the port (a stopped server's children may outlive its parent). */
async function portFree(port, deadline = Date.now() + 30_000) {
  while (Date.now() < deadline) {
    const answered = await fetch(`http://127.0.0.1:${port}/v1/healthz`).then(() => true, () => false);
    if (!answered) return;
    await sleep(100);
  }
  throw new Error(`something still answers on port ${port}`);
}

/** A child in its own process group (stopped with everything it started), its output collected. */
function start(command, args, env) {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const state = { child, output: '', listeners: [] };
  const onData = (d) => {
    state.output += d;
    for (const l of [...state.listeners]) l();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  if (process.env.BENCH_DEV_ECHO) child.stdout.pipe(process.stderr, { end: false }), child.stderr.pipe(process.stderr, { end: false });
  state.waitFor = (re, from = state.output.length) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${re}`)), TIMEOUT_MS);
      const check = () => {
        const m = re.exec(state.output.slice(from));
        if (!m) return;
        clearTimeout(timer);
        state.listeners.splice(state.listeners.indexOf(check), 1);
        resolve(Date.now());
      };
      state.listeners.push(check);
      check();
    });
  state.stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(undefined);
      child.once('exit', () => resolve(undefined));
      process.kill(-child.pid, 'SIGTERM');
      setTimeout(() => child.exitCode === null && process.kill(-child.pid, 'SIGKILL'), 15_000).unref();
    });
  return state;
}

async function main() {
  const original = await readFile(target, 'utf8');
  const dataDir = await mkdtemp(join(tmpdir(), 'payorch-bench-dev-'));
  const port = await freePort();
  const env = { PORT: String(port), DATA_DIR: dataDir };
  const originalCode = await readFile(codeTarget, 'utf8');
  const figures = { ready: [], valid: [], lintError: [], typeError: [], codeTypeError: [], start: [] };
  const loads = [loadavg()[0]];
  let dev;
  try {
    // 1. The loop's first run, from nothing running to the server answering.
    let t0 = Date.now();
    dev = start(process.execPath, ['tools/dev.mjs'], env);
    await dev.waitFor(/dev: ready in \d+ ms/);
    figures.ready.push((await until(`http://127.0.0.1:${port}/v1/healthz`, (s) => s === 200)) - t0);

    /** Writes the file, waits for the loop's outcome; returns ms from the write to `done()`. */
    const save = async (text, done) => {
      const from = dev.output.length;
      const t = Date.now();
      await writeFile(target, text);
      return (await done(from)) - t;
    };
    const restore = async () => {
      const from = dev.output.length;
      await writeFile(target, original);
      await dev.waitFor(/dev: ready in \d+ ms/, from);
    };
    for (let i = 1; i <= RUNS; i++) {
      // 2. A valid save: the changed description is served once the restarted server answers.
      const marker = `bench-dev-${Date.now()}-${i}`;
      const valid = original.replace(/^description: (.*)$/m, `description: $1 (${marker})`);
      figures.valid.push(await save(valid, () => until(`http://127.0.0.1:${port}/openapi.json`, (s, body) => s === 200 && body.includes(marker))));
      await restore();
      loads.push(loadavg()[0]);

      // 3a. A lint error: a string property without maxLength.
      const lintError = original.replace(/^properties:\n/m, `properties:\n  bench_marker_${i}:\n    type: string\n    x-personal-data: false\n`);
      figures.lintError.push(await save(lintError, (from) => dev.waitFor(/dev: ✗ lint \(Spectral\) failed/, from)));
      await restore();

      // 3b. A type error: a new required property the server's mapper does not set.
      const typeError = original
        .replace(/^required: \[id, /m, `required: [bench_marker_${i}, id, `)
        .replace(/^properties:\n/m, `properties:\n  bench_marker_${i}:\n    type: string\n    maxLength: 16\n    x-personal-data: false\n`);
      figures.typeError.push(await save(typeError, (from) => dev.waitFor(/dev: ✗ .* failed/, from)));
      await restore();

      // 3c. A type error the lint cannot see: a code save in the server that does not compile.
      {
        const from = dev.output.length;
        const t = Date.now();
        await writeFile(codeTarget, `${originalCode}\nexport const benchDevTypeError${i}: number = 'not a number';\n`);
        figures.codeTypeError.push((await dev.waitFor(/dev: ✗ type-check\/build @payorch\/server failed/, from)) - t);
        const back = dev.output.length;
        await writeFile(codeTarget, originalCode);
        await dev.waitFor(/dev: ready in \d+ ms/, back);
      }
      loads.push(loadavg()[0]);
    }
    await dev.stop();
    dev = undefined;
    await portFree(port);

    // 4. `npm start` on the up-to-date tree (the loop just built it).
    for (let i = 1; i <= RUNS; i++) {
      t0 = Date.now();
      const npm = start(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['start'], env);
      figures.start.push((await until(`http://127.0.0.1:${port}/v1/healthz`, (s) => s === 200)) - t0);
      await npm.stop();
      // npm and turbo may exit before the server they started: the next start must not find it answering.
      await portFree(port);
      loads.push(loadavg()[0]);
    }
  } catch (err) {
    console.error(`bench:dev failed: ${err?.message ?? err}`);
    if (dev) console.error(`--- the loop's last output ---\n${dev.output.slice(-3000)}`);
    process.exitCode = 1;
  } finally {
    if ((await readFile(target, 'utf8')) !== original) await writeFile(target, original);
    if ((await readFile(codeTarget, 'utf8')) !== originalCode) await writeFile(codeTarget, originalCode);
    await dev?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }

  const row = (label, xs) => (xs.length ? `${label.padEnd(46)} ${secs(median(xs)).padStart(7)}   (${xs.map(secs).join(', ')})` : `${label.padEnd(46)}     n/a`);
  console.log(`\nThe designer's loop and npm start, medians of ${RUNS} (every sample in brackets)`);
  console.log(row('npm run dev: ready (server answering)', figures.ready));
  console.log(row('valid spec save → server answers with it', figures.valid));
  console.log(row('invalid save (lint error) → first error shown', figures.lintError));
  console.log(row('invalid save (new required field) → first error', figures.typeError));
  console.log(row('invalid code save (type error) → first error', figures.codeTypeError));
  console.log(row('npm start, up-to-date tree → ready', figures.start));
  console.log(`load average (1 min) during the run: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on ${(await import('node:os')).availableParallelism()} cores`);
}

await main();
