/**
 * The documentation site at /docs in a real browser (headless Chromium, support/browser.ts): the start
 * page, every guide and provider page, and the Redoc reference load with no console error, no failed or
 * foreign request, and render what a reader needs (the guide's title and tables; the reference's
 * operations). The layout holds on a laptop (1280 px: the top navigation is one row) and on a phone
 * (390 px: nothing is wider than the screen, the navigation is all on it), and no code block hides a
 * character at either width. A screenshot of each page (and of the layout at both widths) is written to
 * packages/server/.screenshots/docs for a person to look at.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromiums, launchBrowser } from './support/browser.js';
import { useServer } from './support/harness.js';

const SHOTS = fileURLToPath(new URL('../.screenshots/docs/', import.meta.url));
const pagesOf = (folder: string) =>
  readdirSync(fileURLToPath(new URL(`../../../docs/${folder}/`, import.meta.url)))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `${folder}/${f === 'README.md' ? 'index' : f.replace(/\.md$/, '')}`);
const GUIDES = pagesOf('guides');
/**
 * The pages opened in the browser: every guide and the providers' index (`guides/routing`, `providers/index`).
 * Each provider page is the same template as the index: tools/test/docs.test.ts checks their links without a browser.
 */
const PROVIDER_PAGES = pagesOf('providers');
const PAGES = [...GUIDES, 'providers/index'];

/** What a page's layout looks like at its current width (measured in the page). */
interface Layout {
  width: number;
  /** How far the page scrolls sideways (0: it fits). */
  pageOverflow: number;
  /** Elements reaching past the screen's edges, outside any sideways-scrolling box. */
  offScreen: string[];
  /** The header's links (brand and navigation): their rows, and those not wholly on screen. */
  navRows: number;
  navLinks: number;
  navOffScreen: string[];
  /** Code blocks that hide part of a line (wider content than box). */
  clippedCode: string[];
  /** Tables wider than their box that do not scroll. */
  clippedTables: string[];
  codeBlocks: number;
  /** The longest line of any code block, in characters. */
  longestCodeLine: number;
}

/** Runs in the page: the layout facts the test asserts. */
function measureLayout(): Layout {
  const width = document.documentElement.clientWidth;
  const name = (e: Element) => `${e.tagName.toLowerCase()}${e.className ? `.${String(e.className)}` : ''} "${(e.textContent ?? '').trim().slice(0, 40)}"`;
  const scrolls = (e: Element) => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  const insideScroller = (e: Element) => {
    for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) if (scrolls(p)) return true;
    return false;
  };
  const off = (e: Element) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && (r.left < -0.5 || r.right > width + 0.5);
  };
  const links = [...document.querySelectorAll('header a')];
  const tops = links.map((a) => a.getBoundingClientRect().top);
  const lineHeight = Math.max(...links.map((a) => a.getBoundingClientRect().height));
  const rows = tops.sort((a, b) => a - b).filter((t, i, all) => i === 0 || t - all[i - 1]! > lineHeight / 2).length;
  const pres = [...document.querySelectorAll('main pre')];
  return {
    width,
    pageOverflow: document.documentElement.scrollWidth - width,
    offScreen: [...document.body.querySelectorAll('*')].filter((e) => off(e) && !insideScroller(e)).map(name).slice(0, 10),
    navRows: rows,
    navLinks: links.length,
    navOffScreen: links.filter(off).map(name),
    clippedCode: pres.filter((p) => p.scrollWidth > p.clientWidth + 1).map(name),
    clippedTables: [...document.querySelectorAll('main table')].filter((t) => t.scrollWidth > t.clientWidth + 1 && !scrolls(t)).map(name),
    codeBlocks: pres.length,
    longestCodeLine: Math.max(0, ...pres.map((p) => Math.max(...(p.textContent ?? '').split('\n').map((l) => l.length)))),
  };
}

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

  it('the start page leads with tasks, then lists every guide, provider page and the references (the protocol detail on its own page)', async () => {
    const { page, response, problems } = await visit('/docs/', (p) => p.waitForSelector('ul.guides'));
    expect(response?.status()).toBe(200);
    // The first thing after the title and one paragraph: the four tasks a newcomer comes for.
    const tasks = await page.$$eval('main > ul.tasks a', (as) => as.map((a) => [a.querySelector('strong')?.textContent, a.getAttribute('href')]));
    expect(tasks).toEqual([
      ['Accept a first payment', 'guides/getting-started.html'],
      ['Go live with a provider', 'providers/index.html'],
      ['Move from Yuno', 'guides/yuno-compatibility.html'],
      ['Handle webhooks', 'guides/webhooks.html'],
    ]);
    expect(await page.$$eval('main > *', (els) => els.slice(0, 3).map((e) => e.tagName.toLowerCase() + (e.className ? `.${e.className}` : '')))).toEqual(['h1', 'div.lead', 'ul.tasks']);
    const links = await page.$$eval('ul.guides a', (as) => as.map((a) => a.getAttribute('href')));
    expect(links).toEqual(expect.arrayContaining([...GUIDES, ...PROVIDER_PAGES].map((g) => `${g}.html`).concat('protocol.html', 'reference.html')));
    // The protocol detail (security headers, string rules) is on the protocol page, not the start page.
    expect(await page.textContent('main')).not.toContain('X-XSS-Protection');
    const protocol = await (await fetch(`${new URL(t.running.url).origin}/docs/protocol.html`)).text();
    for (const words of ['X-XSS-Protection', 'unpaired UTF-16 surrogate', 'X-Idempotency-Key']) expect(protocol).toContain(words);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('fits a laptop (1280 px) and a phone (390 px): one navigation row on the laptop, nothing off the phone’s screen, no code hidden', async () => {
    // Two pages (the start page; the routing guide, with code lines of 100+ characters and wide tables), each
    // loaded once and measured at both widths.
    const { page, problems } = await visit('/docs/', (p) => p.waitForSelector('ul.tasks'));
    const layouts: Record<string, Layout> = {};
    for (const path of ['/docs/', '/docs/guides/routing.html']) {
      if (path !== '/docs/') await page.goto(`${new URL(t.running.url).origin}${path}`, { waitUntil: 'load' });
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
        const layout = await page.evaluate(measureLayout);
        layouts[`${path} @${width}`] = layout;
        // Shows a code block with a long line when the page has one.
        await page.evaluate(() => {
          const pres = [...document.querySelectorAll('main pre')];
          const longest = pres.sort((a, b) => Math.max(...(b.textContent ?? '').split('\n').map((l) => l.length)) - Math.max(...(a.textContent ?? '').split('\n').map((l) => l.length)))[0];
          if (longest) longest.scrollIntoView({ block: 'center' });
          else window.scrollTo(0, 0);
        });
        await page.screenshot({ path: `${SHOTS}${exe.source.replace(/[^\w.-]+/g, '_')}-layout-${path.replace(/^\/docs\/?/, '').replace(/[/.]/g, '_') || 'index'}-${width}.png` });
        await page.evaluate(() => window.scrollTo(0, 0));
      }
    }
    for (const [where, layout] of Object.entries(layouts)) {
      expect(layout.width, where).toBe(Number(where.split('@')[1]));
      expect(layout.pageOverflow, `${where}: the page scrolls sideways`).toBeLessThanOrEqual(0);
      expect(layout.offScreen, `${where}: elements off the screen`).toEqual([]);
      expect(layout.navLinks, where).toBe(6); // the brand and five entries
      expect(layout.navOffScreen, `${where}: navigation links off the screen`).toEqual([]);
      expect(layout.clippedCode, `${where}: code blocks hiding part of a line`).toEqual([]);
      expect(layout.clippedTables, `${where}: tables cut off without scrolling`).toEqual([]);
      if (where.endsWith('@1280')) expect(layout.navRows, `${where}: the header is one row`).toBe(1);
      else expect(layout.navRows, `${where}: the header`).toBeLessThanOrEqual(3);
    }
    // The guide's code has lines far longer than either width shows on one line: they wrap, all visible.
    expect(layouts['/docs/guides/routing.html @390']!.codeBlocks).toBeGreaterThan(0);
    expect(layouts['/docs/guides/routing.html @390']!.longestCodeLine).toBeGreaterThan(100);
    // On the phone every table is a list of cards: nothing scrolls sideways at all.
    expect(await page.$$eval('main table', (ts) => ts.filter((t) => t.scrollWidth > t.clientWidth + 1).length)).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it.each(PAGES)('the %s page renders, with its code and tables, and its links lead somewhere', async (guide) => {
    const { page, response, problems } = await visit(`/docs/${guide}.html`, (p) => p.waitForSelector('main h1'));
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
