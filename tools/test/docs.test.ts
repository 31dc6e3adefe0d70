// tools/docs.mjs: the documentation site (guides rendered from docs/guides, Redoc reference, the spec),
// self-contained: nothing is loaded from a CDN or any other host.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocs, localRedoc, readGuides } from '../docs.mjs';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');
let out: string;

beforeAll(async () => {
  out = join(await mkdtemp(join(tmpdir(), 'payorch-docs-')), 'docs');
  buildDocs({ out });
});
afterAll(async () => {
  if (out) await rm(dirname(out), { recursive: true, force: true });
});

/** Every file a page loads (scripts, stylesheets, images), as opposed to the links a reader may follow. */
const loads = (html: string) => [...html.matchAll(/<(?:script|img)[^>]*\ssrc="([^"]+)"|<link[^>]*\shref="([^"]+)"/g)].map((m) => (m[1] ?? m[2])!);

describe('documentation site', () => {
  it('writes the start page, one page per guide, the reference and its assets', async () => {
    expect((await readdir(out)).sort()).toEqual(
      ['favicon.svg', 'guides', 'index.html', 'openapi.json', 'redoc.standalone.js', 'redoc.standalone.js.LICENSE.txt', 'reference.html', 'reference.js', 'spec.js', 'style.css'].sort(),
    );
    const guides = readGuides(join(repoRoot, 'docs/guides'));
    expect(guides.map((g) => g.name).slice(0, 6)).toEqual(['getting-started', 'test-cards', 'errors', 'idempotency', 'webhooks', 'client']);
    expect((await readdir(join(out, 'guides'))).sort()).toEqual(guides.map((g) => `${g.name}.html`).sort());
    for (const g of guides) {
      const html = await readFile(join(out, 'guides', `${g.name}.html`), 'utf8');
      expect(html).toContain(`<h1>${g.title}</h1>`);
      expect(html, 'snippet comments are for the tests only').not.toContain('snippet-');
    }
  });

  it('carries exactly the bundled spec, as a file and embedded for file:// viewing', async () => {
    const bundled = JSON.parse(await readFile(join(repoRoot, 'packages/types/openapi.json'), 'utf8')) as unknown;
    expect(JSON.parse(await readFile(join(out, 'openapi.json'), 'utf8'))).toEqual(bundled);
    const js = await readFile(join(out, 'spec.js'), 'utf8');
    expect(JSON.parse(js.replace(/^window\.PAYORCH_SPEC = /, '').replace(/;\n$/, ''))).toEqual(bundled);
  });

  it('loads nothing from another host: every file a page loads is a local file', async () => {
    const pages = ['index.html', 'reference.html', ...(await readdir(join(out, 'guides'))).map((f) => `guides/${f}`)];
    for (const page of pages) {
      const html = await readFile(join(out, page), 'utf8');
      const refs = loads(html);
      expect(refs.length, page).toBeGreaterThanOrEqual(1);
      for (const ref of refs) {
        expect(ref, page).not.toMatch(/^[a-z]+:|^\/\//);
        expect(existsSync(join(out, dirname(page), ref)), `${page} → ${ref}`).toBe(true);
      }
    }
    expect(await readFile(join(out, 'redoc.standalone.js'), 'utf8')).not.toContain('cdn.redoc.ly');
  });

  it('links between guides point at the rendered pages, and every link inside the site resolves', async () => {
    for (const f of await readdir(join(out, 'guides'))) {
      const html = await readFile(join(out, 'guides', f), 'utf8');
      expect(html).not.toMatch(/href="[\w-]+\.md"/);
      for (const [, href] of html.matchAll(/<a href="([^"#]+)(?:#[^"]*)?"/g)) {
        if (/^[a-z]+:/.test(href!)) continue;
        expect(existsSync(join(out, 'guides', href!)), `${f} → ${href}`).toBe(true);
      }
    }
  });

  it('refuses a Redoc bundle that calls out to its CDN in a way it does not know', () => {
    expect(() => localRedoc('img.src = "https://cdn.redoc.ly/redoc/other.svg"')).toThrow(/no longer contains/);
    expect(localRedoc('src:"https://cdn.redoc.ly/redoc/logo-mini.svg"')).toMatch(/^src:"data:image\/svg\+xml,/);
  });

  it('titles the reference with the API name and version', async () => {
    expect(await readFile(join(out, 'reference.html'), 'utf8')).toMatch(/<title>payorch API \d+\.\d+\.\d+ reference<\/title>/);
  });
});
