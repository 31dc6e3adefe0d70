/**
 * The published shape (in lieu of @arethetypeswrong/cli, which is not installed): every `exports` entry
 * has `types` before `default` and both files exist after the build; the entries load by package name;
 * the core's module graph imports no Node built-in (it must run in browsers, Deno and Bun).
 * The consumer test (consumer.test.ts) type-checks the packed tarball under NodeNext, Bundler and Node10.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  type: string;
  sideEffects: boolean;
  files: string[];
  exports: Record<string, string | { types: string; default: string }>;
  dependencies: Record<string, string>;
  devDependencies?: Record<string, string>;
};

describe('package.json', () => {
  it('is ESM, side-effect free, ships dist, and depends on neither the server nor Node-only packages', () => {
    expect(pkg.type).toBe('module');
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.files).toContain('dist');
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['openapi-fetch']);
    expect(JSON.stringify(pkg)).not.toContain('@payorch/server');
  });

  it('installs alone: @payorch/types is only a devDependency, its declarations are bundled in dist/types', () => {
    expect(pkg.devDependencies).toHaveProperty('@payorch/types');
    expect(existsSync(join(root, 'dist/types/index.d.ts'))).toBe(true);
    const imports = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? imports(join(dir, e.name)) : e.name.endsWith('.map') ? [] : [...readFileSync(join(dir, e.name), 'utf8').matchAll(/from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2]!),
      );
    expect([...new Set(imports(join(root, 'dist')).filter((s) => !s.startsWith('.')))].sort()).toEqual(['node:fs/promises', 'node:path', 'openapi-fetch']);
  });

  const entries = Object.entries(pkg.exports).filter((e): e is [string, { types: string; default: string }] => typeof e[1] === 'object');
  it('exports ".", "./node" and "./checkout" with types first', () => {
    expect(entries.map(([k]) => k)).toEqual(['.', './node', './checkout']);
    for (const [, conditions] of entries) expect(Object.keys(conditions)).toEqual(['types', 'default']);
  });

  it.each(entries)('%s: the types and default files exist after the build, side by side', (_entry, conditions) => {
    expect(existsSync(join(root, conditions.types)), conditions.types).toBe(true);
    expect(existsSync(join(root, conditions.default)), conditions.default).toBe(true);
    expect(conditions.types.replace(/\.d\.ts$/, '.js')).toBe(conditions.default);
  });
});

describe('entries', () => {
  it('"@payorch/client" loads by name and exports the API', async () => {
    const mod = await import('@payorch/client');
    for (const name of ['createPayorchClient', 'createPayorchAdminClient', 'PayorchError', 'PayorchConnectionError', 'verifyWebhook', 'evidenceFromBytes', 'evidenceFromBlob', 'IDEMPOTENT_ROUTES']) {
      expect(mod, name).toHaveProperty(name);
    }
    expect(mod).not.toHaveProperty('evidenceFromFile');
  });

  it('"@payorch/client/node" loads by name and exports evidenceFromFile', async () => {
    const mod = await import('@payorch/client/node');
    expect(typeof mod.evidenceFromFile).toBe('function');
  });

  it('"@payorch/client/checkout" loads by name, exports the browser helper and imports nothing', async () => {
    const mod = await import('@payorch/client/checkout');
    for (const name of ['mountCardForm', 'cardFormUrl', 'isCardFormResult']) expect(typeof (mod as Record<string, unknown>)[name], name).toBe('function');
    expect(readFileSync(join(root, 'dist/checkout.js'), 'utf8')).not.toMatch(/^\s*import\b|\bimport\(/m);
  });

  it('the core (everything reachable from dist/index.js) imports no Node built-in', () => {
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    const seen = new Set<string>();
    const external = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const code = readFileSync(file, 'utf8');
      for (const [, spec] of code.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
        if (!spec) continue;
        if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
        else external.add(spec);
      }
      // the declarations must not pull in @types/node either
      const dts = file.replace(/\.js$/, '.d.ts');
      expect(readFileSync(dts, 'utf8'), dts).not.toMatch(/reference types="node"|from ['"]node:/);
    };
    visit(join(root, 'dist/index.js'));
    expect(seen.size).toBeGreaterThan(5);
    expect([...external].filter((s) => builtins.has(s))).toEqual([]);
    expect([...external].sort()).toEqual(['openapi-fetch']);
  });
});
