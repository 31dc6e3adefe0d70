#!/usr/bin/env node
// `npm run dev`: the designer's loop. Watches spec/ and the server's and types' sources; on a spec edit
// it runs lint → generate → type-check/build → restart, on a code edit type-check/build → restart. A
// failing step stops that run and prints its first error (file, line, message); the server of the last
// good build keeps answering, and the loop waits for the next edit. It never exits on an error (Ctrl-C).
//   npm run dev                 the whole loop, server on PORT (default 3000) like `npm start`
//   npm run dev -- --no-server  lint, generate and build only
// Edits within DEBOUNCE_MS are one run; an edit during a run queues one more run after it.
// Everything stays warm in this process (docs/contributing.md, "The designer's loop", has the figures):
// Spectral then Redocly in a worker thread (tools/lint-worker.mjs), started with the run and overlapping
// generate (in-process) and the type-check; TypeScript as two incremental builder programs
// (tools/typescript-incremental.mjs) that check only what a change can affect, in a worker thread of lower
// CPU priority (tools/typecheck-worker.mjs), so Spectral, where most first errors come from, answers first.
// The policy: the server takes a change only when every step passed (lint included), and errors are
// reported in pipeline order (a lint error first, even when the type-check finished before it). A spec
// change whose build emitted no changed JavaScript is reloaded by the running server (src/http/spec-reload.ts)
// instead of a restart; anything else restarts it. dist/ may be ahead of the running server after a failed
// run: the next good run restarts it anyway.
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DEBOUNCE_MS = 200;

/**
 * The first error in a tool's output, with the line that names its file when the tool prints that
 * on the line before (Spectral, Redocly); tsc and most others put file and line on the error's line.
 */
export function firstError(output) {
  const lines = output.split('\n').map((l) => l.replace(/\x1b\[[0-9;]*m/g, '').trimEnd());
  const isError = (l) => /\berror\b|\bError:|✖|✗|\bFAIL\b/.test(l);
  const at = lines.findIndex(isError);
  if (at < 0) return lines.filter((l) => l.trim()).slice(-5).join('\n');
  const shown = [];
  const before = lines.slice(0, at).reverse().find((l) => l.trim());
  if (before && /^\S.*\.(ya?ml|json|ts|mjs|js)$/.test(before.trim())) shown.push(before.trim());
  shown.push(lines[at].trim());
  // A message continued on the next indented lines (Redocly's code frame, tsc's elaboration).
  for (const l of lines.slice(at + 1, at + 4)) {
    if (!/^\s+\S/.test(l) || isError(l)) break;
    shown.push(l);
  }
  return shown.join('\n');
}

/** Runs a command, collecting its output; resolves { ok, output }. */
export function run(command, args, { cwd = root, env = process.env } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (err) => resolve({ ok: false, output: `${output}\nerror: ${err.message}` }));
    child.on('close', (code) => resolve({ ok: code === 0, output }));
  });
}

/**
 * The linters in their worker thread: `lint(specEntry)` → { spectral, redocly }, one promise per linter,
 * each settling as soon as that linter answered: { problems } or { error }.
 */
export function lintWorker({ rootDir = root } = {}) {
  const worker = new Worker(join(dirname(fileURLToPath(import.meta.url)), 'lint-worker.mjs'), {
    workerData: { rulesetPath: join(rootDir, 'spec/.spectral.yaml'), cwd: process.cwd() },
  });
  worker.unref();
  const waiting = new Map(); // `${id}:${tool}` → resolve
  let next = 0;
  worker.on('message', (m) => {
    const key = `${m.id}:${m.tool}`;
    waiting.get(key)?.(m);
    waiting.delete(key);
  });
  worker.on('error', (err) => {
    for (const resolve of waiting.values()) resolve({ error: String(err?.stack ?? err) });
    waiting.clear();
  });
  return {
    lint(specEntry) {
      const id = next++;
      const answerOf = (tool) => new Promise((resolve) => waiting.set(`${id}:${tool}`, resolve));
      const answers = { spectral: answerOf('spectral'), redocly: answerOf('redocly') };
      worker.postMessage({ id, specEntry });
      return answers;
    },
    close: () => worker.terminate(),
  };
}

/** The type-checker in its worker thread: `build(project)` → typescript-incremental.mjs's build result. */
function typecheckWorker(workerData) {
  const worker = new Worker(join(dirname(fileURLToPath(import.meta.url)), 'typecheck-worker.mjs'), { workerData });
  worker.unref();
  const waiting = new Map();
  let next = 0;
  worker.on('message', (m) => {
    waiting.get(m.id)?.(m.error ? { ok: false, output: `Error: ${m.error}` } : m.result);
    waiting.delete(m.id);
  });
  worker.on('error', (err) => {
    for (const resolve of waiting.values()) resolve({ ok: false, output: `Error: ${String(err?.stack ?? err)}` });
    waiting.clear();
  });
  return {
    build(project) {
      const id = next++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        worker.postMessage({ id, project });
      });
    },
    close: () => worker.terminate(),
  };
}

/** A step's answer from a list of problems (each `file:line:col severity rule: message`). */
const fromProblems = (problems, tool) => ({ ok: problems.length === 0, output: problems.length ? `${problems.join('\n')}\n${tool}: ${problems.length} problem(s)` : '' });

/**
 * The steps of a run, in order. The two lint steps are `concurrent`: they start with the run and the
 * others do not wait for them; their outcome is still reported first.
 */
export function defaultSteps(rootDir = root) {
  process.env.SCARF_ANALYTICS ??= 'false';
  process.env.REDOCLY_TELEMETRY ??= 'off';
  process.env.REDOCLY_SUPPRESS_UPDATE_NOTICE ??= 'true';
  const specEntry = join(rootDir, 'spec/openapi.yaml');
  const cacheDir = join(rootDir, 'node_modules/.cache/payorch-dev');
  let linter;
  let pending; // this run's lint answers, shared by the two lint steps (both ask in the run's first tick)
  const lintOnce = () => {
    linter ??= lintWorker({ rootDir });
    if (!pending) {
      const answers = (pending = linter.lint(specEntry));
      // Forgotten once both settled: the next run may start in the same turn of the event loop.
      void Promise.all([answers.spectral, answers.redocly]).then(() => {
        if (pending === answers) pending = undefined;
      });
    }
    return pending;
  };
  const lintStep = (name, key) => ({
    name,
    concurrent: true,
    run: async () => {
      const answer = await lintOnce()[key];
      return answer.error ? { ok: false, output: `Error: ${answer.error}` } : fromProblems(answer.problems, name);
    },
  });
  // TypeScript in its own worker thread, at a lower priority than the linters' (tools/typecheck-worker.mjs).
  let checker;
  const build = (project) => {
    checker ??= typecheckWorker({
      projects: { types: join(rootDir, 'packages/types/tsconfig.json'), server: join(rootDir, 'packages/server/tsconfig.build.json') },
      cacheDir,
      cwd: process.cwd(),
    });
    return checker.build(project);
  };
  return {
    lint: [lintStep('lint (Spectral)', 'spectral'), lintStep('lint (Redocly)', 'redocly')],
    generate: [
      {
        name: 'generate',
        run: async () => {
          try {
            const { generate, staleFiles } = await import('./codegen.mjs');
            const changed = await staleFiles(await generate({ specEntry }));
            for (const file of changed) {
              await mkdir(dirname(file.path), { recursive: true });
              await writeFile(file.path, file.content);
            }
            return { ok: true, output: `${changed.length} file(s) written` };
          } catch (err) {
            return { ok: false, output: `Error: ${err?.message ?? err}` };
          }
        },
      },
    ],
    build: [
      { name: 'type-check/build @payorch/types', run: () => build('types') },
      { name: 'type-check/build @payorch/server', run: () => build('server') },
    ],
    close: () => Promise.all([linter?.close(), checker?.close()]),
  };
}

/**
 * The server of the last good build, restarted after each good build. The restart step ends when the new
 * server says it listens (`readyLine`) or `readyUrl` answers 200 (the line is an info log, which LOG_LEVEL
 * can hide), or fails with its output when it exits before that.
 */
export function serverProcess({ cwd = join(root, 'packages/server'), script = 'dist/main.js', log = console.log, readyLine = /payorch listening on/, readyUrl } = {}) {
  let child;
  const stopping = new WeakSet();
  const stop = () =>
    new Promise((resolve) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
      const current = child;
      stopping.add(current);
      const timer = setTimeout(() => current.kill('SIGKILL'), 10_000);
      current.once('exit', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
      current.kill('SIGTERM');
    });
  return {
    name: 'restart',
    async run() {
      await stop();
      // With an IPC channel: the server then takes reload requests (src/main.ts).
      const started = spawn(process.execPath, [script], { cwd, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
      child = started;
      let output = '';
      return new Promise((resolve) => {
        let ready = false;
        const seen = (d) => {
          if (!ready) output += d;
          if (!ready && readyLine.test(output)) {
            ready = true;
            resolve({ ok: true, output: '' });
          }
        };
        started.stdout.on('data', (d) => (process.stdout.write(d), seen(d)));
        started.stderr.on('data', (d) => (process.stderr.write(d), seen(d)));
        const poll = async () => {
          while (!ready && started.exitCode === null && started.signalCode === null) {
            const ok = await fetch(readyUrl).then((r) => r.ok, () => false);
            if (ok && !ready) {
              ready = true;
              resolve({ ok: true, output: '' });
            }
            await new Promise((r) => setTimeout(r, 100));
          }
        };
        if (readyUrl) void poll();
        started.once('exit', (code, signal) => {
          if (!ready) resolve({ ok: false, output: `the server exited (${signal ?? `code ${code}`}) before it listened; its last lines:\n${output}` });
          else if (!stopping.has(started)) log(`dev: the server exited (${signal ?? `code ${code}`}); it starts again after the next good build`);
        });
      });
    },
    /**
     * Asks the running server to serve the spec file as it is now, without a restart (src/http/spec-reload.ts):
     * { ok: true } when it did; { ok: false, output: why } when it cannot (then restart).
     */
    reload() {
      const current = child;
      if (!current || current.exitCode !== null || current.signalCode !== null || !current.connected) {
        return Promise.resolve({ ok: false, output: 'no server is running' });
      }
      return new Promise((resolve) => {
        const done = (result) => {
          clearTimeout(timer);
          current.off('message', onMessage);
          current.off('exit', onExit);
          resolve(result);
        };
        const onMessage = (m) => {
          if (m?.type === 'payorch:spec-reloaded') done(m.reloaded ? { ok: true, output: '' } : { ok: false, output: m.reason });
        };
        const onExit = () => done({ ok: false, output: 'the server exited' });
        const timer = setTimeout(() => done({ ok: false, output: 'the server did not answer the reload within 10 s' }), 10_000);
        current.on('message', onMessage);
        current.once('exit', onExit);
        current.send({ type: 'payorch:reload-spec' });
      });
    },
    stop,
  };
}

/**
 * The loop: `trigger(kind)` after an edit ('spec' runs every step, 'code' from build on). Resolves the
 * run's outcome through `onRun` for tests; `close()` stops the watchers and the server.
 * @param {{ steps: ReturnType<typeof defaultSteps>, server?: { run: () => Promise<{ok: boolean, output: string}>, stop: () => Promise<void> }, log?: (line: string) => void, onRun?: (result: { ok: boolean, failed?: string, error?: string }) => void }} options
 */
export function createDevLoop({ steps, server, log = console.log, onRun = () => {} }) {
  let running = false;
  // The running server's code is older than dist/ (a build emitted changed JavaScript and the run then
  // failed, or there is no server yet): the next good run restarts it, whatever it changed.
  let serverStale = true;
  let pending; // 'spec' | 'code' | undefined: what arrived during a run
  let timer;
  let queued;

  async function once(kind) {
    const work = [...(kind === 'spec' ? [...steps.lint, ...steps.generate] : []), ...steps.build];
    const list = [...work, ...(server ? [server] : [])];
    const started = Date.now();
    const cpu = process.cpuUsage(); // this process and its lint worker: a figure the machine's load moves less than the wall time
    log(`\ndev: ${kind === 'spec' ? 'spec changed' : 'code changed'}: ${list.map((s) => s.name).join(' → ')}`);
    const timed = async (step) => {
      const t = Date.now();
      const result = await step.run();
      // Emitted, the new code is ahead of the running server, whether or not this run gets to restart it.
      if (steps.build.includes(step) && result.ok && result.changedJs !== 0) serverStale = true;
      return { ...result, ms: Date.now() - t, at: Date.now() - started };
    };
    // Concurrent steps (the linters) start now; the others run one after the other beside them, each
    // only once the one before it passed. Outcomes are taken in list order: the first failure is the
    // one reported, and the server restarts only when every step passed.
    const outcome = new Map();
    let previous = Promise.resolve({ ok: true });
    for (const step of work) {
      if (step.concurrent) outcome.set(step, timed(step));
      else {
        previous = previous.then((r) => (r.ok ? timed(step) : { ok: false, skipped: true, output: '' }));
        outcome.set(step, previous);
      }
    }
    const finished = [...outcome.values()];
    let reloaded = false;
    // When the server's code is current (a spec edit whose build emitted no changed JavaScript; a build
    // step that does not say counts as changed), the running server reloads the spec instead of restarting
    // (a restart reopens the embedded database); it restarts when it cannot reload.
    const serverStep = async () => {
      if (kind === 'spec' && !serverStale && server.reload) {
        const t = Date.now();
        const reloaded = await server.reload();
        if (reloaded.ok) return { ok: true, output: '', ms: Date.now() - t, at: Date.now() - started, reloaded: true };
        log(`dev: the server cannot reload this change (${reloaded.output}); restarting it`);
      }
      return timed(server);
    };
    for (const step of list) {
      const result = await (outcome.get(step) ?? (step === server ? serverStep() : timed(step)));
      if (step === server && result.ok) serverStale = false;
      if (!result.ok) {
        const error = firstError(result.output);
        log(`dev: ✗ ${step.name} failed (${result.ms} ms; ${result.at} ms after the edit). First error:\n\n${error.replace(/^/gm, '    ')}\n`);
        log(`dev: ${server ? 'the server keeps running the last good build; ' : ''}waiting for the next edit`);
        await Promise.allSettled(finished); // nothing of this run may still be working when the next starts
        return { ok: false, failed: step.name, error };
      }
      log(`dev: ✓ ${result.reloaded ? 'reload (spec only: the running server took it)' : step.name} (${result.ms} ms)`);
      if (result.reloaded) reloaded = true;
    }
    const used = process.cpuUsage(cpu);
    log(`dev: ready in ${Date.now() - started} ms${server ? (reloaded ? ' (spec reloaded)' : ' (server restarted)') : ''}; CPU of the loop ${Math.round((used.user + used.system) / 1000)} ms`);
    return { ok: true };
  }

  async function drain(kind) {
    running = true;
    let next = kind;
    while (next) {
      pending = undefined;
      let result;
      try {
        result = await once(next);
      } catch (err) {
        // A step that throws is reported like one that fails: the loop goes on.
        log(`dev: ✗ ${err?.message ?? err}`);
        result = { ok: false, failed: 'internal', error: String(err?.message ?? err) };
      }
      onRun(result);
      next = pending;
    }
    running = false;
  }

  return {
    trigger(kind) {
      // A spec edit needs the whole pipeline: it wins over a code edit waiting in the same window.
      queued = queued === 'spec' || kind === 'spec' ? 'spec' : 'code';
      clearTimeout(timer);
      timer = setTimeout(() => {
        const k = queued;
        queued = undefined;
        if (running) pending = pending === 'spec' || k === 'spec' ? 'spec' : 'code';
        else void drain(k);
      }, DEBOUNCE_MS);
    },
    async close() {
      clearTimeout(timer);
      await server?.stop();
      await steps.close?.();
    },
  };
}

/** Watches the directories (recursively) and triggers the loop; editor swap and generated files are ignored. */
export function watchTree(loop, { rootDir = root } = {}) {
  const ignored = (file) => !file || /(^|\/)(\.|node_modules\/|dist\/|generated\/)|~$|\.sw.$/.test(file);
  const watchers = [
    ['spec', join(rootDir, 'spec')],
    ['code', join(rootDir, 'packages/server/src')],
    ['code', join(rootDir, 'packages/types/src')],
  ].map(([kind, dir]) =>
    watch(dir, { recursive: true }, (_event, file) => {
      if (ignored(String(file ?? '').split('\\').join('/'))) return;
      if (kind === 'spec' && String(file).startsWith('released')) return;
      loop.trigger(kind);
    }),
  );
  return () => watchers.forEach((w) => w.close());
}

async function main() {
  const noServer = process.argv.includes('--no-server');
  const host = process.env.HOST ?? '127.0.0.1';
  const readyUrl = `http://${host.includes(':') ? `[${host}]` : host}:${process.env.PORT ?? 3000}/v1/healthz`;
  const server = noServer ? undefined : serverProcess({ readyUrl });
  const loop = createDevLoop({ steps: defaultSteps(), server });
  const unwatch = watchTree(loop);
  console.log(`dev: watching ${['spec/', 'packages/server/src/', 'packages/types/src/'].join(', ')} (Ctrl-C to stop)`);
  const stop = async () => {
    unwatch();
    await loop.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  loop.trigger('spec');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  void main();
}
