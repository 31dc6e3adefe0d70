#!/usr/bin/env node
// `npm run docs`: the documentation site, built from the bundled spec and docs/guides/*.md into a folder
// (default dist/docs at the repository root) that the server serves at /docs and any static host, or a
// browser from disk, can serve too:
//   index.html                 the start page: what the API does, the guides, the reference
//   guides/<name>.html         each guide of docs/guides, rendered from Markdown (marked)
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

/** Reads docs/guides: [{ name, title, markdown }] in reading order. */
export function readGuides(dir = defaultGuides) {
  const guides = readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .map((f) => {
      // The snippet comments drive the guides' tests (packages/client/test/guides.test.ts); readers never see them.
      const markdown = readFileSync(join(dir, f), 'utf8').replace(/<!-- snippet-[\s\S]*?-->\n?/g, '');
      const title = /^# (.+)$/m.exec(markdown)?.[1] ?? f;
      return { name: f.replace(/\.md$/, ''), title, markdown };
    });
  const rank = (name) => (GUIDE_ORDER.includes(name) ? GUIDE_ORDER.indexOf(name) : GUIDE_ORDER.length);
  return guides.sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
}

function markdownRenderer() {
  const marked = new Marked({ gfm: true });
  marked.use({
    walkTokens(token) {
      // Guides link to each other as .md files (so they also work when read in the repository).
      if (token.type === 'link' && /^[\w-]+\.md(#.*)?$/.test(token.href)) token.href = token.href.replace(/\.md(?=#|$)/, '.html');
    },
  });
  return marked;
}

const STYLE = `:root { color-scheme: light; --fg: #1d2330; --muted: #5b6475; --line: #e3e6ec; --accent: #2a5bd7; --code: #f5f6f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); }
header { border-bottom: 1px solid var(--line); padding: 0.8rem 1.5rem; display: flex; gap: 1.5rem; align-items: baseline; flex-wrap: wrap; }
header .brand { font-weight: 700; color: var(--fg); text-decoration: none; }
header nav a { margin-right: 1rem; color: var(--accent); text-decoration: none; }
header nav a[aria-current="page"] { color: var(--fg); font-weight: 600; }
main { max-width: 52rem; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
a { color: var(--accent); }
code { background: var(--code); padding: 0.1em 0.3em; border-radius: 3px; font-size: 0.92em; }
pre { background: var(--code); padding: 0.9rem 1rem; overflow-x: auto; border-radius: 6px; line-height: 1.45; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; width: 100%; font-size: 0.92em; margin: 1rem 0; display: block; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: 0.35rem 0.6rem; text-align: left; vertical-align: top; }
th { background: var(--code); }
.guides li { margin: 0.4rem 0; }
.muted { color: var(--muted); }
`;

function page({ title, nav, current, body, prefix }) {
  const links = nav
    .map((n) => `<a href="${prefix}${n.href}"${n.href === current ? ' aria-current="page"' : ''}>${escapeHtml(n.label)}</a>`)
    .join('');
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
${body}
    </main>
  </body>
</html>
`;
}

/**
 * Writes the site into `out` (emptied first) and returns the files written.
 * @param {{ out?: string, specFile?: string, guidesDir?: string }} [options]
 */
export function buildDocs({ out = defaultOut, specFile = defaultSpec, guidesDir = defaultGuides } = {}) {
  const spec = JSON.parse(readFileSync(specFile, 'utf8'));
  const guides = readGuides(guidesDir);
  const marked = markdownRenderer();
  const bundle = redocBundle();
  const name = `${spec.info?.title ?? 'API'} ${spec.info?.version ?? ''}`.trim();
  const nav = [...guides.map((g) => ({ href: `guides/${g.name}.html`, label: g.title })), { href: 'reference.html', label: 'API reference' }];

  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'guides'), { recursive: true });
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

  for (const g of guides) {
    write(`guides/${g.name}.html`, page({ title: `${g.title} · payorch`, nav, current: `guides/${g.name}.html`, prefix: '../', body: marked.parse(g.markdown) }));
  }

  const description = spec.info?.description ? marked.parse(spec.info.description) : '';
  const list = guides.map((g) => `<li><a href="guides/${g.name}.html">${escapeHtml(g.title)}</a></li>`).join('\n');
  write(
    'index.html',
    page({
      title: `${name} documentation`,
      nav,
      current: 'index.html',
      prefix: './',
      body: `<h1>${escapeHtml(name)}</h1>
${description}
<h2>Guides</h2>
<ul class="guides">
${list}
</ul>
<h2>Reference</h2>
<p>Every operation, field, limit and error of the API: <a href="reference.html">the API reference</a>
(also as <a href="openapi.json">openapi.json</a>, OpenAPI ${escapeHtml(spec.openapi ?? '3.1')}).</p>`,
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
