// tools/docs.mjs: the documentation site (guides rendered from docs/guides, Redoc reference, the spec),
// self-contained: nothing is loaded from a CDN or any other host.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocs, localRedoc, readGuides, readProviderPages, splitDescription } from '../docs.mjs';

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
      ['favicon.svg', 'guides', 'index.html', 'openapi.json', 'protocol.html', 'providers', 'redoc.standalone.js', 'redoc.standalone.js.LICENSE.txt', 'reference.html', 'reference.js', 'spec.js', 'style.css'].sort(),
    );
    const providers = readProviderPages(join(repoRoot, 'docs/providers'));
    expect(providers[0]!.name, 'docs/providers/README.md is the providers’ index').toBe('index');
    expect((await readdir(join(out, 'providers'))).sort()).toEqual(providers.map((p) => `${p.name}.html`).sort());
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
    const pages = ['index.html', 'protocol.html', 'reference.html', ...(await readdir(join(out, 'guides'))).map((f) => `guides/${f}`), ...(await readdir(join(out, 'providers'))).map((f) => `providers/${f}`)];
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

  it('links between pages point at the rendered pages, and every link inside the site resolves', async () => {
    const pages = ['index.html', 'protocol.html', ...(await readdir(join(out, 'guides'))).map((f) => `guides/${f}`), ...(await readdir(join(out, 'providers'))).map((f) => `providers/${f}`)];
    for (const page of pages) {
      const html = await readFile(join(out, page), 'utf8');
      expect(html, page).not.toMatch(/href="[^"]*\.md(#[^"]*)?"/);
      for (const [, href] of html.matchAll(/<a href="([^"#]+)(?:#[^"]*)?"/g)) {
        if (/^[a-z]+:/.test(href!)) continue;
        expect(existsSync(join(out, dirname(page), href!)), `${page} → ${href}`).toBe(true);
      }
    }
  });

  it('the start page leads with the spec’s first paragraph and the tasks; the rest of the description is the protocol page', async () => {
    const spec = JSON.parse(await readFile(join(repoRoot, 'packages/types/openapi.json'), 'utf8')) as { info: { description: string } };
    const { lead, protocol } = splitDescription(spec.info.description);
    expect(lead.length).toBeGreaterThan(50);
    expect(lead + '\n\n' + protocol).toBe(spec.info.description.trim());
    const index = await readFile(join(out, 'index.html'), 'utf8');
    const page = await readFile(join(out, 'protocol.html'), 'utf8');
    expect(index.indexOf('<ul class="tasks">')).toBeLessThan(index.indexOf('<h2'));
    // Each bold heading of the protocol detail (**Authentication.**, **Errors.**, …) is on the protocol page only.
    const headings = [...protocol.matchAll(/\*\*([^*]+)\*\*/g)].map((m) => m[1]!);
    expect(headings.length).toBeGreaterThanOrEqual(3);
    for (const h of headings) {
      expect(page, h).toContain(`<strong>${h}</strong>`);
      expect(index, h).not.toContain(`<strong>${h}</strong>`);
    }
  });

  it('gives each table cell its column’s name, for the phone layout', async () => {
    const html = await readFile(join(out, 'guides', 'test-cards.html'), 'utf8');
    expect(html).toContain('<td data-label="card number"><code>4507990000000002</code></td>');
    expect(html).toContain('<td data-label="response_code"><code>SUCCEEDED</code></td>');
  });

  it('refuses a Redoc bundle that calls out to its CDN in a way it does not know', () => {
    expect(() => localRedoc('img.src = "https://cdn.redoc.ly/redoc/other.svg"')).toThrow(/no longer contains/);
    expect(localRedoc('src:"https://cdn.redoc.ly/redoc/logo-mini.svg"')).toMatch(/^src:"data:image\/svg\+xml,/);
  });

  it('titles the reference with the API name and version', async () => {
    expect(await readFile(join(out, 'reference.html'), 'utf8')).toMatch(/<title>payorch API \d+\.\d+\.\d+ reference<\/title>/);
  });
});
