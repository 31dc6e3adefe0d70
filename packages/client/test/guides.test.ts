/**
 * The guides in docs/guides and the provider pages in docs/providers cannot rot: every ```ts block of
 * every page is type-checked against the built client, and a guide marked `<!-- snippet-run -->` is run, its blocks in order as one program,
 * against the sandbox server of this test run. Each `// → value` comment is a promise about what the
 * `console.log` on that line prints; the run's output must keep every promise, in order.
 *
 * A guide's hidden `<!-- snippet-prelude … -->` comment declares what its blocks take as given (a client,
 * ids); each block is checked as its own module after that prelude.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WORKSPACE_ROOT } from './support/server.js';

const GUIDES_DIR = join(WORKSPACE_ROOT, 'docs/guides');
/** The provider pages (a connection and its routing, with the client): type-checked like the guides, never run. */
const PROVIDERS_DIR = join(WORKSPACE_ROOT, 'docs/providers');
const CLIENT_DIR = join(WORKSPACE_ROOT, 'packages/client');

interface Block {
  code: string;
  /** 1-based line of the block's first code line in the guide. */
  line: number;
}

interface Guide {
  /** Under docs/: `guides/routing.md`, `providers/stripe.md`. */
  file: string;
  prelude: string;
  run: boolean;
  blocks: Block[];
}

function readGuide(dir: string, file: string): Guide {
  const text = readFileSync(join(dir, file), 'utf8');
  const prelude = /<!-- snippet-prelude[^\n]*\n([\s\S]*?)-->/.exec(text)?.[1] ?? '';
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```ts') continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end] !== '```') end++;
    blocks.push({ code: lines.slice(start, end).join('\n'), line: start + 1 });
    i = end;
  }
  return { file: `${dir === GUIDES_DIR ? 'guides' : 'providers'}/${file}`, prelude, run: text.includes('<!-- snippet-run'), blocks };
}

const pages = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => readGuide(dir, f));
const guides = pages(GUIDES_DIR);
const providerPages = pages(PROVIDERS_DIR).filter((p) => p.file !== 'providers/README.md');

// Inside the client package, so `@payorch/client` resolves to this workspace's build, as for an integrator.
const work = mkdtempSync(join(CLIENT_DIR, '.guides-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The prelude without the single-name declarations the code declares itself (`const payorch = …`). */
function preludeFor(prelude: string, code: string): string {
  return prelude
    .split('\n')
    .map((line) => {
      const name = /^declare (?:const|function) (\w+)\b(?![^;]*,)/.exec(line)?.[1];
      return name && new RegExp(`\\b(?:const|let|function) ${name}\\b`).test(code) ? '' : line;
    })
    .join('\n');
}

/** The module for one block (or a whole runnable guide), with a map back to the guide's lines. */
function moduleFor(guide: Guide, blocks: Block[]): { source: string; origin: (line: number) => string } {
  const parts: string[] = [];
  const origins: string[] = [];
  const push = (code: string, at: (i: number) => string) =>
    code.split('\n').forEach((l, i) => {
      parts.push(l);
      origins.push(at(i));
    });
  push(preludeFor(guide.prelude, blocks.map((b) => b.code).join('\n')), () => `${guide.file} (prelude)`);
  for (const block of blocks) push(block.code, (i) => `${guide.file}:${block.line + i}`);
  push('export {};', () => `${guide.file}`);
  return { source: parts.join('\n'), origin: (line) => origins[line - 1] ?? guide.file };
}

function writeModules() {
  const origins = new Map<string, (line: number) => string>();
  for (const guide of [...guides, ...providerPages]) {
    const stem = guide.file.replace(/\.md$/, '').replace('/', '-');
    const modules = guide.run ? [{ name: `${stem}.ts`, blocks: guide.blocks }] : guide.blocks.map((b, i) => ({ name: `${stem}-${i + 1}.ts`, blocks: [b] }));
    for (const m of modules) {
      const { source, origin } = moduleFor(guide, m.blocks);
      writeFileSync(join(work, m.name), source);
      origins.set(m.name, origin);
    }
  }
  writeFileSync(
    join(work, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../../tsconfig.base.json',
      compilerOptions: { lib: ['ES2023', 'DOM'], types: ['node'], rootDir: '.', outDir: 'out', declaration: false, sourceMap: false, noUnusedLocals: false },
      include: ['*.ts'],
    }),
  );
  return origins;
}

describe('guides (docs/guides)', () => {
  const origins = writeModules();
  // One tsc run type-checks every block and emits the runnable guides' programs.
  let compiled: { status: number | null; output: string };
  beforeAll(() => {
    const tsc = join(WORKSPACE_ROOT, 'node_modules/typescript/bin/tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', join(work, 'tsconfig.json')], { encoding: 'utf8' });
    compiled = { status: result.status, output: result.stdout + result.stderr };
  });

  it('has the guides a newcomer needs, each with code', () => {
    expect(guides.map((g) => g.file)).toEqual(
      expect.arrayContaining(['getting-started.md', 'test-cards.md', 'errors.md', 'idempotency.md', 'webhooks.md', 'client.md'].map((f) => `guides/${f}`)),
    );
    for (const g of guides.filter((g) => g.file !== 'guides/test-cards.md')) expect(g.blocks.length, g.file).toBeGreaterThan(0);
  });

  it('each provider page shows, with the client, its connection created and named in a routing', () => {
    expect(providerPages.map((p) => p.file)).toEqual(expect.arrayContaining(['providers/stripe.md', 'providers/adyen.md', 'providers/mercado-pago.md']));
    for (const page of providerPages) {
      const code = page.blocks.map((b) => b.code).join('\n');
      expect(code, page.file).toContain('payorch.connections.create(');
      expect(code, page.file).toContain('payorch.routing.update(');
    }
  });

  it('every TypeScript block type-checks against the client', () => {
    // tsc reports "file.ts(line,col): error …": point at the guide's own line instead.
    const errors = compiled.output.replace(/(?:^|\n)[^\n]*?([\w-]+\.ts)\((\d+),(\d+)\)/g, (_all, file: string, line: string) => {
      const origin = origins.get(file)?.(Number(line)) ?? file;
      return `\n${origin}`;
    });
    expect(errors.trim(), 'type errors in the guides').toBe('');
    expect(compiled.status).toBe(0);
  });

  for (const guide of guides.filter((g) => g.run)) {
    it(`${guide.file} runs against a sandbox server and prints what it promises`, async () => {
      const { baseUrl, sandbox } = inject('payorch');
      const expected = guide.blocks.flatMap((b) => [...b.code.matchAll(/\/\/ → (.*)$/gm)].map((m) => m[1]!.trim()));
      expect(expected.length).toBeGreaterThan(3);
      const program = join(work, 'out', `${guide.file.replace(/\.md$/, '').replace('/', '-')}.js`);
      const output = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [program], {
          cwd: work,
          env: {
            ...process.env,
            PAYORCH_BASE_URL: baseUrl,
            PAYORCH_PUBLIC_API_KEY: sandbox.public_api_key,
            PAYORCH_PRIVATE_SECRET_KEY: sandbox.private_secret_key,
            PAYORCH_ACCOUNT_ID: sandbox.account_id,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
        child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      expect(output.stderr).toBe('');
      expect(output.code).toBe(0);
      expect(output.stdout.trim().split('\n')).toEqual(expected);
    });
  }
});
