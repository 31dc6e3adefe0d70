#!/usr/bin/env node
// `npm run dev`: the designer's loop. Watches spec/ and the server's and types' sources; on a spec edit
// it runs lint → generate → build → restart, on a code edit build → restart. A failing step stops that
// run and prints its first error (file, line, message) clearly; the server of the last good build keeps
// answering, and the loop waits for the next edit. It never exits on an error (Ctrl-C stops it).
//   npm run dev                 the whole loop, server on PORT (default 3000) like `npm start`
//   npm run dev -- --no-server  lint, generate and build only
// Edits within DEBOUNCE_MS are one run; an edit during a run queues one more run after it.
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

const node = (script, args = [], cwd = root) => () => run(process.execPath, [script, ...args], { cwd });
const tsc = (project) => node(join(root, 'node_modules/typescript/bin/tsc'), ['-p', project]);

/** The steps of a run, in order. */
export function defaultSteps(rootDir = root) {
  const tools = join(rootDir, 'tools');
  const env = { ...process.env, SCARF_ANALYTICS: 'false', REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  return {
    lint: [
      {
        name: 'lint (Spectral)',
        run: () =>
          run(join(rootDir, 'node_modules/.bin/spectral'), ['lint', '--fail-severity=warn', '--ruleset', '../spec/.spectral.yaml', '../spec/openapi.yaml'], {
            cwd: tools,
            env,
          }),
      },
      { name: 'lint (Redocly)', run: () => run(process.execPath, ['lint-redocly.mjs', '../spec/openapi.yaml'], { cwd: tools, env }) },
    ],
    generate: [{ name: 'generate', run: node(join(tools, 'codegen.mjs')) }],
    build: [
      { name: 'build @payorch/types', run: tsc(join(rootDir, 'packages/types/tsconfig.json')) },
      { name: 'build @payorch/server', run: tsc(join(rootDir, 'packages/server/tsconfig.build.json')) },
    ],
  };
}

/** The server of the last good build, restarted after each good build. */
export function serverProcess({ cwd = join(root, 'packages/server'), script = 'dist/main.js', log = console.log } = {}) {
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
      const started = spawn(process.execPath, [script], { cwd, stdio: 'inherit' });
      child = started;
      started.once('exit', (code, signal) => {
        if (!stopping.has(started)) log(`dev: the server exited (${signal ?? `code ${code}`}); it starts again after the next good build`);
      });
      return { ok: true, output: '' };
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
  let pending; // 'spec' | 'code' | undefined: what arrived during a run
  let timer;
  let queued;

  async function once(kind) {
    const list = [...(kind === 'spec' ? [...steps.lint, ...steps.generate] : []), ...steps.build, ...(server ? [server] : [])];
    const started = Date.now();
    log(`\ndev: ${kind === 'spec' ? 'spec changed' : 'code changed'}: ${list.map((s) => s.name).join(' → ')}`);
    for (const step of list) {
      const t = Date.now();
      const result = await step.run();
      if (!result.ok) {
        const error = firstError(result.output);
        log(`dev: ✗ ${step.name} failed (${Date.now() - t} ms). First error:\n\n${error.replace(/^/gm, '    ')}\n`);
        log(`dev: ${server ? 'the server keeps running the last good build; ' : ''}waiting for the next edit`);
        return { ok: false, failed: step.name, error };
      }
      log(`dev: ✓ ${step.name} (${Date.now() - t} ms)`);
    }
    log(`dev: ready in ${Date.now() - started} ms${server ? ' (server restarted)' : ''}`);
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
  const server = noServer ? undefined : serverProcess();
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
