// tools/docs.mjs: a self-contained static reference folder (Swagger UI + the bundled spec), with
// nothing loaded from a CDN or any other host.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocs } from '../docs.mjs';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');
let out: string;

beforeAll(async () => {
  out = join(await mkdtemp(join(tmpdir(), 'payorch-docs-')), 'docs');
  buildDocs({ out });
});
afterAll(async () => {
  if (out) await rm(dirname(out), { recursive: true, force: true });
});

describe('static API reference', () => {
  it('writes the page, its Swagger UI assets and the spec', async () => {
    expect((await readdir(out)).sort()).toEqual(
      [
        'LICENSE',
        'NOTICE',
        'favicon-16x16.png',
        'favicon-32x32.png',
        'index.html',
        'init.js',
        'openapi.json',
        'spec.js',
        'swagger-ui-bundle.js',
        'swagger-ui-standalone-preset.js',
        'swagger-ui.css',
      ].sort(),
    );
  });

  it('carries exactly the bundled spec, as a file and embedded for file:// viewing', async () => {
    const bundled = JSON.parse(await readFile(join(repoRoot, 'packages/types/openapi.json'), 'utf8')) as unknown;
    expect(JSON.parse(await readFile(join(out, 'openapi.json'), 'utf8'))).toEqual(bundled);
    const js = await readFile(join(out, 'spec.js'), 'utf8');
    expect(JSON.parse(js.replace(/^window\.PAYORCH_SPEC = /, '').replace(/;\n$/, ''))).toEqual(bundled);
  });

  it('loads nothing from another host: every reference in the page is a local file', async () => {
    const html = await readFile(join(out, 'index.html'), 'utf8');
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(5);
    for (const ref of refs) {
      expect(ref).toMatch(/^\.\//);
      expect(existsSync(join(out, ref))).toBe(true);
    }
    const init = await readFile(join(out, 'init.js'), 'utf8');
    expect(init).toContain('validatorUrl: null');
    expect(html + init).not.toMatch(/https?:\/\//);
  });

  it('titles the page with the API name and version', async () => {
    expect(await readFile(join(out, 'index.html'), 'utf8')).toMatch(/<title>payorch API \d+\.\d+\.\d+ reference<\/title>/);
  });
});
