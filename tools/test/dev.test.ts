// tools/dev.mjs (`npm run dev`): the first error of each tool's output is what a designer sees; a run
// goes lint → generate → build → restart and stops at the first failing step without stopping the loop
// (the server of the last good build is not restarted); edits are debounced, an edit during a run queues
// one more; the watcher reacts to a spec edit in a real directory. Steps are stand-ins here (the real
// ones take a minute on this machine); the real loop's output is in the README's walkthrough.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDevLoop, DEBOUNCE_MS, firstError, serverProcess, watchTree, type RunOutcome, type Step } from '../dev.mjs';

describe('firstError', () => {
  it.each([
    {
      tool: 'Spectral (file on the line before)',
      output: '\n/repo/spec/components/schemas/Customer.yaml\n 20:10  error  payorch-string-max-length  String schema without maxLength.  properties.gender\n 31:3  error  other  Second.\n\n✖ 2 problems\n',
      first: '/repo/spec/components/schemas/Customer.yaml\n20:10  error  payorch-string-max-length  String schema without maxLength.  properties.gender',
    },
    {
      tool: 'tsc (file and line on the error line, elaboration indented)',
      output:
        "src/customers/mapper.ts(7,3): error TS2741: Property 'preferred_language' is missing in type '{ id: string; }' but required in type 'Customer'.\n  The expected type comes from here.\nsrc/other.ts(1,1): error TS1: x\n",
      first: "src/customers/mapper.ts(7,3): error TS2741: Property 'preferred_language' is missing in type '{ id: string; }' but required in type 'Customer'.\n  The expected type comes from here.",
    },
    { tool: 'a thrown error', output: 'node:internal\nError: spec does not bundle\n', first: 'Error: spec does not bundle' },
    { tool: 'colours are stripped', output: '\x1b[31merror\x1b[39m TS1005: oops', first: 'error TS1005: oops' },
  ])('$tool', ({ output, first }) => {
    expect(firstError(output)).toBe(first);
  });
});

/** A stand-in step that records its runs and answers what `results` says next (ok by default). */
function step(name: string, calls: string[], results: boolean[] = [], delayMs = 0): Step {
  return {
    name,
    run: async () => {
      calls.push(name);
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      const ok = results.length ? results.shift()! : true;
      return { ok, output: ok ? '' : `${name}.yaml\n 3:1  error  rule  ${name} is broken\n` };
    },
  };
}

function loopWith(results: Partial<Record<'lint' | 'build', boolean[]>> = {}, delayMs = 0) {
  const calls: string[] = [];
  const outcomes: RunOutcome[] = [];
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  const server = { ...step('restart', calls), stop: async () => void calls.push('stop') };
  const loop = createDevLoop({
    steps: { lint: [step('lint', calls, results.lint, delayMs)], generate: [step('generate', calls)], build: [step('build', calls, results.build)] },
    server,
    log: (l) => lines.push(l),
    onRun: (o) => {
      outcomes.push(o);
      waiters.shift()?.();
    },
  });
  const nextRun = () => new Promise<void>((r) => waiters.push(r));
  return { loop, calls, outcomes, lines, nextRun };
}

describe('the loop', () => {
  it('a spec edit runs every step in order; a code edit starts at the build', async () => {
    const t = loopWith();
    const done = t.nextRun();
    t.loop.trigger('spec');
    await done;
    const again = t.nextRun();
    t.loop.trigger('code');
    await again;
    expect(t.calls).toEqual(['lint', 'generate', 'build', 'restart', 'build', 'restart']);
    expect(t.outcomes).toEqual([{ ok: true }, { ok: true }]);
  });

  it('a failing step stops the run, shows the first error, keeps the loop and the old server; the next edit runs again', async () => {
    const t = loopWith({ lint: [false] });
    let done = t.nextRun();
    t.loop.trigger('spec');
    await done;
    expect(t.calls).toEqual(['lint']);
    expect(t.outcomes[0]).toEqual({ ok: false, failed: 'lint', error: 'lint.yaml\n3:1  error  rule  lint is broken' });
    expect(t.lines.join('\n')).toContain('dev: ✗ lint failed');
    expect(t.lines.join('\n')).toContain('    lint.yaml\n    3:1  error  rule  lint is broken');
    expect(t.lines.at(-1)).toBe('dev: the server keeps running the last good build; waiting for the next edit');
    done = t.nextRun();
    t.loop.trigger('spec');
    await done;
    expect(t.calls).toEqual(['lint', 'lint', 'generate', 'build', 'restart']);
    await t.loop.close();
    expect(t.calls.at(-1)).toBe('stop');
  });

  it('edits within the debounce window are one run; an edit during a run queues exactly one more', async () => {
    const t = loopWith({}, 300);
    const first = t.nextRun();
    const second = t.nextRun();
    for (let i = 0; i < 5; i++) t.loop.trigger(i === 2 ? 'spec' : 'code');
    await new Promise((r) => setTimeout(r, DEBOUNCE_MS + 100)); // the first run is in its 300 ms lint now
    t.loop.trigger('code');
    t.loop.trigger('code');
    await first;
    await second;
    await new Promise((r) => setTimeout(r, DEBOUNCE_MS + 400));
    // The spec edit in the first window wins over the code edits around it; the two during the run are one.
    expect(t.calls).toEqual(['lint', 'generate', 'build', 'restart', 'build', 'restart']);
    expect(t.outcomes).toHaveLength(2);
  });
});

describe('reload or restart', () => {
  /** A loop whose build reports `changedJs[i]` on its i-th run and whose server reloads as `reloads` says. */
  function reloadingLoop(plan: { changedJs: (number | undefined)[]; reloads?: boolean[]; lint?: boolean[] }) {
    const calls: string[] = [];
    const outcomes: RunOutcome[] = [];
    const lines: string[] = [];
    const waiters: (() => void)[] = [];
    let builds = 0;
    let reloads = 0;
    let lints = 0;
    const loop = createDevLoop({
      steps: {
        // Beside the others, as the real linters: a failing lint does not stop the build from emitting.
        lint: [{ name: 'lint', concurrent: true, run: async () => (calls.push('lint'), { ok: plan.lint?.[lints++] ?? true, output: 'spec.yaml:1:1 error rule: broken' }) }],
        generate: [step('generate', calls)],
        build: [{ name: 'build', run: async () => (calls.push('build'), { ok: true, output: '', changedJs: plan.changedJs[builds++] }) }],
      },
      server: {
        ...step('restart', calls),
        stop: async () => {},
        reload: async () => (calls.push('reload'), plan.reloads?.[reloads++] ?? true ? { ok: true, output: '' } : { ok: false, output: 'the personal-data declaration changed' }),
      },
      log: (l) => lines.push(l),
      onRun: (o) => (outcomes.push(o), waiters.shift()?.()),
    });
    const run = async (kind: 'spec' | 'code') => {
      const done = new Promise<void>((r) => waiters.push(r));
      loop.trigger(kind);
      await done;
    };
    return { loop, calls, outcomes, lines, run };
  }

  it('the first run restarts; a spec change that emitted no changed JavaScript reloads; changed JavaScript or a code edit restarts', async () => {
    const t = reloadingLoop({ changedJs: [0, 0, 3, 0, undefined] });
    await t.run('spec');
    await t.run('spec');
    await t.run('spec');
    await t.run('code');
    await t.run('spec');
    expect(t.calls).toEqual([
      'lint', 'generate', 'build', 'restart', // no server yet
      'lint', 'generate', 'build', 'reload', // the spec only
      'lint', 'generate', 'build', 'restart', // the build changed JavaScript
      'build', 'restart', // a code edit
      'lint', 'generate', 'build', 'restart', // a build that does not say what it changed
    ]);
    expect(t.lines.filter((l) => l.startsWith('dev: ready'))[1]).toMatch(/\(spec reloaded\)/);
    expect(t.outcomes.every((o) => o.ok)).toBe(true);
  });

  it('a server that cannot reload the change is restarted, and says why', async () => {
    const t = reloadingLoop({ changedJs: [0, 0], reloads: [false] });
    await t.run('spec');
    await t.run('spec');
    expect(t.calls.slice(4)).toEqual(['lint', 'generate', 'build', 'reload', 'restart']);
    expect(t.lines.join('\n')).toContain('cannot reload this change (the personal-data declaration changed); restarting it');
  });

  it('JavaScript emitted by a run that then failed is still ahead of the server: the next run restarts even when it emits nothing new', async () => {
    const t = reloadingLoop({ changedJs: [0, 2, 0, 0], lint: [true, false, true, true] });
    await t.run('spec');
    await t.run('spec'); // the build emitted new JavaScript, the lint failed: no restart
    await t.run('spec'); // nothing new emitted, but the server runs the old code
    await t.run('spec'); // now current: a reload
    expect(t.calls).toEqual(['lint', 'generate', 'build', 'restart', 'lint', 'generate', 'build', 'lint', 'generate', 'build', 'restart', 'lint', 'generate', 'build', 'reload']);
    expect(t.outcomes.map((o) => o.ok)).toEqual([true, false, true, true]);
  });
});

describe('concurrent steps (the linters beside generate and build)', () => {
  it('start with the run; a lint failure is reported first even when the later steps finished before it, and nothing restarts', async () => {
    const calls: string[] = [];
    const outcomes: RunOutcome[] = [];
    let release!: () => void;
    const lintGate = new Promise<void>((r) => (release = r));
    const lint: Step = {
      name: 'lint',
      concurrent: true,
      run: async () => {
        calls.push('lint');
        await lintGate; // answers only after the build ran
        return { ok: false, output: 'spec/x.yaml:3:1 error rule: broken' };
      },
    };
    const track = (name: string): Step => ({
      name,
      run: async () => {
        calls.push(name);
        if (name === 'build') release();
        return { ok: true, output: '' };
      },
    });
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const loop = createDevLoop({
      steps: { lint: [lint], generate: [track('generate')], build: [track('build')] },
      server: { ...track('restart'), stop: async () => {} },
      log: () => {},
      onRun: (o) => (outcomes.push(o), done()),
    });
    loop.trigger('spec');
    await finished;
    expect(calls).toEqual(['lint', 'generate', 'build']);
    expect(outcomes).toEqual([{ ok: false, failed: 'lint', error: 'spec/x.yaml:3:1 error rule: broken' }]);
  });
});

describe('watching and restarting for real', () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a file written in spec/ triggers a spec run, one in packages/server/src a code run; released/ and dist are ignored', async () => {
    dir = await mkdtemp(join(tmpdir(), 'payorch-dev-'));
    for (const d of ['spec/released', 'packages/server/src/dist', 'packages/types/src']) await mkdir(join(dir, d), { recursive: true });
    const kinds: string[] = [];
    const unwatch = watchTree({ trigger: (k) => kinds.push(k) }, { rootDir: dir });
    try {
      const settle = () => new Promise((r) => setTimeout(r, 300));
      await writeFile(join(dir, 'spec/released/openapi.json'), '{}');
      await writeFile(join(dir, 'packages/server/src/dist/x.js'), '');
      await settle();
      expect(kinds).toEqual([]);
      await writeFile(join(dir, 'spec/openapi.yaml'), 'openapi: 3.1.0\n');
      await settle();
      expect(new Set(kinds)).toEqual(new Set(['spec']));
      kinds.length = 0;
      await writeFile(join(dir, 'packages/server/src/app.ts'), '');
      await settle();
      expect(new Set(kinds)).toEqual(new Set(['code']));
    } finally {
      unwatch();
    }
  });

  it('the server is restarted as a new process once it says it listens; a restart is not reported as a crash; one that exits first fails with its output', async () => {
    dir ??= await mkdtemp(join(tmpdir(), 'payorch-dev-'));
    const script = join(dir, 'server.mjs');
    await writeFile(script, "process.on('SIGTERM', () => process.exit(0)); setInterval(() => {}, 1000); console.log('payorch listening on http://x');\n");
    const lines: string[] = [];
    const server = serverProcess({ cwd: dir, script, log: (l) => lines.push(l) });
    expect((await server.run()).ok).toBe(true);
    expect((await server.run()).ok).toBe(true);
    await server.stop();
    expect(lines).toEqual([]);

    const broken = join(dir, 'broken.mjs');
    await writeFile(broken, "console.error('payorch failed to start: the spec does not compile'); process.exit(1);\n");
    const failed = await serverProcess({ cwd: dir, script: broken, log: (l) => lines.push(l) }).run();
    expect(failed.ok).toBe(false);
    expect(firstError(failed.output)).toContain('payorch failed to start: the spec does not compile');
  });
});
