#!/usr/bin/env node
// `npm run docs`: the documentation site, built from the bundled spec, docs/guides/*.md and docs/providers/*.md
// into a folder (default dist/docs at the repository root) that the server serves at /docs and any static
// host, or a browser from disk, can serve too:
//   index.html                 the start page: the tasks a newcomer comes for, then the guides, providers, reference
//   guides/<name>.html         each guide of docs/guides, rendered from Markdown (marked)
//   providers/<name>.html      each provider page of docs/providers (README.md becomes providers/index.html)
//   protocol.html              the protocol reference: the spec's description (authentication, errors,
//                              idempotency, headers, value rules), everything after its first paragraph
//   reference.html             the API reference: Redoc's standalone bundle with the spec embedded
//   openapi.json               the bundled spec, for tools and downloads
// Nothing is loaded from another host at view time (no CDN, no web fonts).
//   node tools/docs.mjs [--out dist/docs]
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Marked } from 'marked';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const defaultSpec = join(root, 'packages/types/openapi.json');
const defaultGuides = join(root, 'docs/guides');
const defaultProviders = join(root, 'docs/providers');
/** The service's icon: the docs site's pages declare it, and the server answers /favicon.ico and /favicon.svg with it. */
export const FAVICON = join(root, 'docs/assets/favicon.svg');
const defaultOut = join(root, 'dist/docs');

/** The order a newcomer reads them in; a guide not listed here comes after these, by name. */
const GUIDE_ORDER = ['getting-started', 'test-cards', 'errors', 'idempotency', 'webhooks', 'client', 'checkout', 'routing', 'provider-notifications', 'yuno-compatibility'];

const require = createRequire(import.meta.url);
/** Redoc's standalone bundle (React and its other dependencies inside): one script, no network. */
export function redocBundle() {
  return join(dirname(require.resolve('redoc/package.json')), 'bundles');
}

/**
 * Redoc's sidebar footer loads Redocly's logo from their CDN: the one request to another host the bundle
 * makes. It gets an inline image instead (a 1×1 transparent SVG), so the docs load nothing from elsewhere;
 * a Redoc upgrade that moves the URL fails the build here rather than quietly calling out.
 */
export function localRedoc(source) {
  const cdnLogo = '"https://cdn.redoc.ly/redoc/logo-mini.svg"';
  if (!source.includes(cdnLogo)) throw new Error(`Redoc's bundle no longer contains ${cdnLogo}: check what it loads from other hosts`);
  return source.replaceAll(cdnLogo, `"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E"`);
}

const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

/** The Markdown pages of a folder: [{ name, title, markdown }], README.md named `index`. */
function readPages(dir) {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .map((f) => {
      // The snippet comments drive the guides' tests (packages/client/test/guides.test.ts); readers never see them.
      const markdown = readFileSync(join(dir, f), 'utf8').replace(/<!-- snippet-[\s\S]*?-->\n?/g, '');
      const title = (/^# (.+)$/m.exec(markdown)?.[1] ?? f).replaceAll('`', '');
      return { name: f === 'README.md' ? 'index' : f.replace(/\.md$/, ''), title, markdown };
    });
}

/** Reads docs/guides: [{ name, title, markdown }] in reading order. */
export function readGuides(dir = defaultGuides) {
  const rank = (name) => (GUIDE_ORDER.includes(name) ? GUIDE_ORDER.indexOf(name) : GUIDE_ORDER.length);
  return readPages(dir).sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
}

/** Reads docs/providers: the capability matrix (README.md, as `index`) first, then each provider's page. */
export function readProviderPages(dir = defaultProviders) {
  return readPages(dir).sort((a, b) => (a.name === 'index' ? -1 : b.name === 'index' ? 1 : a.name.localeCompare(b.name)));
}

/** The spec's description split in two: its first paragraph (what the API does) and the protocol detail after it. */
export function splitDescription(description = '') {
  const [lead = '', ...rest] = description.trim().split(/\n\s*\n/);
  return { lead, protocol: rest.join('\n\n') };
}

/** A header cell's words, for a data cell's label: Markdown's marks taken out. */
const plainText = (markdown) => markdown.replace(/[`*]/g, '').trim();

function markdownRenderer() {
  const marked = new Marked({ gfm: true });
  marked.use({
    renderer: {
      // Each data cell carries its column's header as data-label, so on a phone (style.css) a row becomes a
      // card of labelled values, every one visible, instead of a table wider than the screen.
      table(token) {
        const inline = (cell) => this.parser.parseInline(cell.tokens);
        const align = (cell) => (cell.align ? ` style="text-align: ${cell.align}"` : '');
        const head = `<thead>\n<tr>${token.header.map((c) => `<th${align(c)}>${inline(c)}</th>`).join('')}</tr>\n</thead>\n`;
        const labels = token.header.map((c) => escapeHtml(plainText(c.text)));
        const rows = token.rows.map((row) => `<tr>${row.map((c, i) => `<td data-label="${labels[i] ?? ''}"${align(c)}>${inline(c)}</td>`).join('')}</tr>`).join('\n');
        return `<table>\n${head}${rows ? `<tbody>\n${rows}\n</tbody>\n` : ''}</table>\n`;
      },
    },
    walkTokens(token) {
      // Pages link to each other as .md files (so they also work when read in the repository): a guide,
      // a provider page, or the other folder's (../providers/README.md is ../providers/index.html here).
      if (token.type === 'link' && /^(\.\.\/(guides|providers)\/)?[\w-]+\.md(#.*)?$/.test(token.href)) {
        token.href = token.href.replace(/(^|\/)README\.md/, '$1index.md').replace(/\.md(?=#|$)/, '.html');
      }
    },
  });
  return marked;
}

const STYLE = `:root { color-scheme: light; --fg: #1d2330; --muted: #5b6475; --line: #e3e6ec; --accent: #2a5bd7; --code: #f5f6f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); }
header { border-bottom: 1px solid var(--line); padding: 0.7rem 1.5rem; display: flex; flex-wrap: wrap; gap: 0.3rem 2rem; align-items: baseline; }
header .brand { font-weight: 700; color: var(--fg); text-decoration: none; white-space: nowrap; }
header nav { display: flex; flex-wrap: wrap; gap: 0.2rem 1.25rem; }
header nav a { color: var(--accent); text-decoration: none; white-space: nowrap; }
header nav a[aria-current="page"], header nav a.here { color: var(--fg); font-weight: 600; }
main { max-width: 54rem; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
a { color: var(--accent); }
code { background: var(--code); padding: 0.1em 0.3em; border-radius: 3px; font-size: 0.92em; overflow-wrap: anywhere; }
/* Long lines wrap rather than run off the edge: every character stays visible at any width. */
pre { background: var(--code); padding: 0.9rem 1rem; white-space: pre-wrap; overflow-wrap: anywhere; border-radius: 6px; line-height: 1.45; }
pre code { background: none; padding: 0; }
/* A table too wide for the screen (a phone, seven columns) scrolls sideways, with a scrollbar that shows it does. */
table { border-collapse: collapse; width: 100%; font-size: 0.92em; margin: 1rem 0; display: block; overflow-x: auto; }
table::-webkit-scrollbar { height: 0.5rem; }
table::-webkit-scrollbar-thumb { background: #c3c8d2; border-radius: 4px; }
table::-webkit-scrollbar-track { background: var(--code); }
th, td { border: 1px solid var(--line); padding: 0.35rem 0.6rem; text-align: left; vertical-align: top; }
th { background: var(--code); }
.lead { font-size: 1.1em; }
.tasks { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 0.8rem; }
.tasks a { display: block; height: 100%; border: 1px solid var(--line); border-radius: 8px; padding: 0.8rem 1rem; color: var(--fg); text-decoration: none; }
.tasks a:hover { border-color: var(--accent); }
.tasks strong { display: block; color: var(--accent); font-size: 1.05em; margin-bottom: 0.2rem; }
.guides li { margin: 0.4rem 0; }
.pages { border-top: 1px solid var(--line); margin-top: 3rem; padding-top: 1rem; font-size: 0.92em; }
.pages a { margin-right: 1rem; display: inline-block; max-width: 100%; }
.muted { color: var(--muted); }
@media (max-width: 600px) {
  header { padding: 0.6rem 1rem; }
  main { padding: 0.5rem 1rem 3rem; }
  h1 { font-size: 1.7em; }
  /* Tables become cards: one bordered block per row, each value under its column's name (data-label). */
  table, tbody, tr, td { display: block; width: 100%; }
  table { overflow-x: visible; font-size: 0.95em; }
  thead { display: none; }
  tr { border: 1px solid var(--line); border-radius: 6px; margin-bottom: 0.6rem; padding: 0.3rem 0.7rem; }
  td { border: 0; padding: 0.2rem 0; }
  td::before { content: attr(data-label); display: block; color: var(--muted); font-size: 0.85em; font-weight: 600; }
}
`;

/** The top navigation: a few entries, so it fits one row on a laptop and two on a phone. */
const NAV = [
  { href: 'guides/getting-started.html', label: 'Get started' },
  { href: 'index.html#guides', label: 'Guides', section: 'guides/' },
  { href: 'providers/index.html', label: 'Providers', section: 'providers/' },
  { href: 'protocol.html', label: 'Protocol' },
  { href: 'reference.html', label: 'API reference' },
];

function page({ title, current, body, prefix, pages }) {
  const links = NAV.map((n) => {
    const mark = n.href === current ? ' aria-current="page"' : n.section && current.startsWith(n.section) && !NAV.some((m) => m.href === current) ? ' class="here"' : '';
    return `<a href="${prefix}${n.href}"${mark}>${escapeHtml(n.label)}</a>`;
  }).join('');
  // The pages next to this one (the other guides, the other provider pages), after its text.
  const siblings = pages ? `\n<nav class="pages" aria-label="${escapeHtml(pages.label)}">${escapeHtml(pages.label)}: ${pages.items.map((p) => (p.href === current ? `<strong>${escapeHtml(p.title)}</strong>` : `<a href="${prefix}${p.href}">${escapeHtml(p.title)}</a>`)).join(' ')}</nav>` : '';
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="generator" content="tools/docs.mjs" />
    <title>${escapeHtml(title)}</title>
    <link rel="icon" type="image/svg+xml" href="${prefix}favicon.svg" />
    <link rel="stylesheet" href="${prefix}style.css" />
  </head>
  <body>
    <header><a class="brand" href="${prefix}index.html">payorch docs</a><nav>${links}</nav></header>
    <main>
${body}${siblings}
    </main>
  </body>
</html>
`;
}

/**
 * Writes the site into `out` (emptied first) and returns the files written.
 * @param {{ out?: string, specFile?: string, guidesDir?: string, providersDir?: string }} [options]
 */
export function buildDocs({ out = defaultOut, specFile = defaultSpec, guidesDir = defaultGuides, providersDir = defaultProviders } = {}) {
  const spec = JSON.parse(readFileSync(specFile, 'utf8'));
  const guides = readGuides(guidesDir);
  const providers = readProviderPages(providersDir);
  const marked = markdownRenderer();
  const bundle = redocBundle();
  const name = `${spec.info?.title ?? 'API'} ${spec.info?.version ?? ''}`.trim();

  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'guides'), { recursive: true });
  mkdirSync(join(out, 'providers'), { recursive: true });
  const written = [];
  const write = (file, content) => {
    writeFileSync(join(out, file), content);
    written.push(join(out, file));
  };

  write('style.css', STYLE);
  // Every page declares this icon (and the service serves it at /favicon.ico too), so no browser asks for
  // an icon that answers 404.
  write('favicon.svg', readFileSync(FAVICON, 'utf8'));
  write('redoc.standalone.js', localRedoc(readFileSync(join(bundle, 'redoc.standalone.js'), 'utf8')));
  copyFileSync(join(bundle, 'redoc.standalone.js.LICENSE.txt'), join(out, 'redoc.standalone.js.LICENSE.txt'));
  written.push(join(out, 'redoc.standalone.js.LICENSE.txt'));
  write('openapi.json', `${JSON.stringify(spec, null, 2)}\n`);
  // Embedded as a script as well, so the reference works from file:// (where fetch() of openapi.json is blocked).
  write('spec.js', `window.PAYORCH_SPEC = ${JSON.stringify(spec)};\n`);
  write(
    'reference.js',
    `Redoc.init(window.PAYORCH_SPEC, { hideDownloadButton: false, expandResponses: '200,201', jsonSampleExpandLevel: 3, sortPropsAlphabetically: false }, document.getElementById('redoc'));\n`,
  );
  write(
    'reference.html',
    `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="generator" content="tools/docs.mjs, Redoc" />
    <title>${escapeHtml(name)} reference</title>
    <link rel="icon" type="image/svg+xml" href="./favicon.svg" />
    <style>body { margin: 0; } .back { display: block; padding: 0.5rem 1rem; font: 14px system-ui, sans-serif; border-bottom: 1px solid #e3e6ec; }</style>
  </head>
  <body>
    <a class="back" href="./index.html">← payorch guides</a>
    <div id="redoc"></div>
    <script src="./redoc.standalone.js"></script>
    <script src="./spec.js"></script>
    <script src="./reference.js"></script>
  </body>
</html>
`,
  );

  const guidePages = { label: 'Guides', items: guides.map((g) => ({ href: `guides/${g.name}.html`, title: g.title })) };
  for (const g of guides) {
    write(`guides/${g.name}.html`, page({ title: `${g.title} · payorch`, current: `guides/${g.name}.html`, prefix: '../', body: marked.parse(g.markdown), pages: guidePages }));
  }
  const providerPages = { label: 'Providers', items: providers.map((p) => ({ href: `providers/${p.name}.html`, title: p.title })) };
  for (const p of providers) {
    write(`providers/${p.name}.html`, page({ title: `${p.title} · payorch`, current: `providers/${p.name}.html`, prefix: '../', body: marked.parse(p.markdown), pages: providerPages }));
  }

  const { lead, protocol } = splitDescription(spec.info?.description);
  write(
    'protocol.html',
    page({
      title: `Protocol reference · payorch`,
      current: 'protocol.html',
      prefix: './',
      body: `<h1>Protocol reference</h1>
<p class="muted">What every request and response of ${escapeHtml(name)} has in common. Each operation's own
fields, limits and errors are in <a href="reference.html">the API reference</a>.</p>
${marked.parse(protocol)}`,
    }),
  );

  const link = (href, title) => `<li><a href="${href}">${escapeHtml(title)}</a></li>`;
  const tasks = [
    ['guides/getting-started.html', 'Accept a first payment', 'Sandbox keys, a customer, a vaulted card and a payment, in a few minutes, with the typed client or curl.'],
    ['providers/index.html', 'Go live with a provider', 'Connect Stripe, Adyen or Mercado Pago with your own account, route payments to it, and register its notifications.'],
    ['guides/yuno-compatibility.html', 'Move from Yuno', 'The same v1 requests and answers: what carries over unchanged, and where payorch differs.'],
    ['guides/webhooks.html', 'Handle webhooks', 'Register an endpoint, verify each signed delivery, and react to payments, refunds and chargebacks.'],
  ];
  write(
    'index.html',
    page({
      title: `${name} documentation`,
      current: 'index.html',
      prefix: './',
      body: `<h1>${escapeHtml(name)}</h1>
<div class="lead">${marked.parse(lead)}</div>
<ul class="tasks">
${tasks.map(([href, title, what]) => `<li><a href="${href}"><strong>${escapeHtml(title)}</strong>${escapeHtml(what)}</a></li>`).join('\n')}
</ul>
<h2 id="guides">Guides</h2>
<ul class="guides">
${guides.map((g) => link(`guides/${g.name}.html`, g.title)).join('\n')}
</ul>
<h2 id="providers">Providers</h2>
<ul class="guides">
${providers.map((p) => link(`providers/${p.name}.html`, p.title)).join('\n')}
</ul>
<h2>Reference</h2>
<ul class="guides">
<li><a href="protocol.html">Protocol reference</a>: authentication, errors, idempotency, response headers and the values every request may carry</li>
<li><a href="reference.html">API reference</a>: every operation, field, limit and error (also as <a href="openapi.json">openapi.json</a>, OpenAPI ${escapeHtml(spec.openapi ?? '3.1')})</li>
</ul>`,
    }),
  );
  return written;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const argv = process.argv.slice(2);
    const i = argv.indexOf('--out');
    if (argv.some((a, k) => a !== '--out' && k !== i + 1)) throw new Error('usage: docs.mjs [--out <folder>]');
    const out = i >= 0 ? resolve(process.cwd(), argv[i + 1] ?? '') : defaultOut;
    const files = buildDocs({ out });
    console.log(`docs written to ${relative(process.cwd(), out) || '.'}/ (${files.length} files); open ${relative(process.cwd(), join(out, 'index.html'))}`);
  } catch (err) {
    console.error(`docs: ${err.message ?? err}`);
    process.exit(1);
  }
}
