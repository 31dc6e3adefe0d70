/**
 * The documentation site at /docs in a real browser (headless Chromium, support/browser.ts): the start
 * page, every guide and the Redoc reference load with no console error, no failed or foreign request,
 * and render what a reader needs (the guide's title and tables; the reference's operations). A
 * screenshot of each page is written to packages/server/.screenshots/docs for a person to look at.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromiums, launchBrowser } from './support/browser.js';
import { useServer } from './support/harness.js';

const SHOTS = fileURLToPath(new URL('../.screenshots/docs/', import.meta.url));
const GUIDES = readdirSync(fileURLToPath(new URL('../../../docs/guides/', import.meta.url)))
  .filter((f) => f.endsWith('.md'))
  .map((f) => f.replace(/\.md$/, ''));

// The same assertions in every Chromium there is: the full browser asks for things (/favicon.ico) the
// headless shell does not.
for (const exe of await findChromiums()) describe(`documentation site in Chromium (${exe.source})`, () => {
  // The docs need no database of their own; the embedded one is enough.
  const t = useServer('pglite');
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchBrowser({}, exe);
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** Opens a page and records everything that went wrong while it loaded and rendered. */
  async function visit(path: string, ready: (page: Page) => Promise<unknown>) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    const origin = new URL(t.running.url).origin;
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
    page.on('request', (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith(`blob:${origin}`) && !r.url().startsWith('data:')) problems.push(`foreign request: ${r.url()}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
    });
    const response = await page.goto(`${origin}${path}`, { waitUntil: 'load' });
    await ready(page);
    // Every page declares the service's icon, and it loads (else a full browser asks for /favicon.ico).
    const icon = await page.$eval('link[rel="icon"]', (l) => (l as HTMLLinkElement).href).catch(() => undefined);
    if (!icon) problems.push('no <link rel="icon">');
    else if ((await fetch(icon)).status !== 200) problems.push(`icon ${icon} does not load`);
    await page.screenshot({ path: `${SHOTS}${exe.source.replace(/[^\w.-]+/g, '_')}-${path.replace(/^\/docs\/?/, '').replace(/[/.]/g, '_') || 'index'}.png` });
    return { page, response, problems };
  }

  it('the start page lists every guide and the reference', async () => {
    const { page, response, problems } = await visit('/docs/', (p) => p.waitForSelector('ul.guides'));
    expect(response?.status()).toBe(200);
    const links = await page.$$eval('ul.guides a', (as) => as.map((a) => a.getAttribute('href')));
    expect(links).toEqual(expect.arrayContaining(GUIDES.map((g) => `guides/${g}.html`)));
    expect(await page.textContent('main')).toContain('API reference');
    expect(problems).toEqual([]);
    await page.close();
  });

  it.each(GUIDES)('the %s guide renders, with its code and tables, and its links lead somewhere', async (guide) => {
    const { page, response, problems } = await visit(`/docs/guides/${guide}.html`, (p) => p.waitForSelector('main h1'));
    expect(response?.status()).toBe(200);
    expect((await page.textContent('main h1'))?.length).toBeGreaterThan(3);
    expect(await page.locator('main pre, main table').count()).toBeGreaterThan(0);
    // Every link inside the site answers 200 (the browser follows them as a reader would).
    const hrefs = await page.$$eval('main a[href]', (as) => as.map((a) => (a as HTMLAnchorElement).href));
    for (const href of hrefs.filter((h) => h.startsWith(new URL(t.running.url).origin))) {
      const res = await fetch(href);
      expect(res.status, href).toBe(200);
    }
    expect(problems).toEqual([]);
    await page.close();
  });

  it('the service icon is served where browsers look for it (/favicon.ico) and where the pages declare it', async () => {
    for (const path of ['/favicon.ico', '/favicon.svg']) {
      const res = await fetch(`${new URL(t.running.url).origin}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toContain('image/svg+xml');
      expect(await res.text(), path).toContain('<svg');
    }
  });

  it('the reference renders every tag and operation of the spec', async () => {
    // Redoc renders in the page after load: wait until its operations are in the document.
    const rendered = (p: Page) => p.waitForFunction(() => document.querySelector('#redoc')?.textContent?.includes('Create a customer'), undefined, { timeout: 30_000 });
    const { page, response, problems } = await visit('/docs/reference.html', rendered);
    expect(response?.status()).toBe(200);
    const spec = (await (await fetch(`${t.running.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary?: string }>> };
    const summaries = Object.values(spec.paths).flatMap((ops) => Object.values(ops).map((op) => op.summary).filter((s): s is string => !!s));
    const text = await page.textContent('#redoc');
    for (const summary of summaries) expect(text, summary).toContain(summary);
    expect(problems).toEqual([]);
    await page.close();
  });
});
