#!/usr/bin/env node
// `npm run docs`: a static API reference built from the bundled spec into a folder (default dist/docs
// at the repository root) that any static host, or a browser from disk, can serve. It is Swagger UI
// (swagger-ui-dist, the copy the server already ships for /docs) plus the spec: no CDN, no network
// at view time (the online validator badge is off).
//   node tools/docs.mjs [--out dist/docs]
// (Redocly's and Scalar's static builders are not installed here; Swagger UI is what builds offline.)
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const defaultSpec = join(root, 'packages/types/openapi.json');
const defaultOut = join(root, 'dist/docs');

/** The swagger-ui-dist folder: the one swagger-ui-express (a server dependency) uses. */
export function swaggerUiDist() {
  const fromServer = createRequire(join(root, 'packages/server/package.json'));
  const express = fromServer.resolve('swagger-ui-express/package.json');
  return dirname(createRequire(express).resolve('swagger-ui-dist/package.json'));
}

const ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png', 'favicon-16x16.png', 'LICENSE', 'NOTICE'];

const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

/**
 * Writes the reference into `out` (emptied first) and returns the files written.
 * @param {{ out?: string, specFile?: string }} [options]
 */
export function buildDocs({ out = defaultOut, specFile = defaultSpec } = {}) {
  const spec = JSON.parse(readFileSync(specFile, 'utf8'));
  const dist = swaggerUiDist();
  const version = JSON.parse(readFileSync(join(dist, 'package.json'), 'utf8')).version;
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const asset of ASSETS) copyFileSync(join(dist, asset), join(out, asset));
  writeFileSync(join(out, 'openapi.json'), `${JSON.stringify(spec, null, 2)}\n`);
  const title = `${spec.info?.title ?? 'API'} ${spec.info?.version ?? ''} reference`.trim();
  writeFileSync(
    join(out, 'index.html'),
    `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="generator" content="tools/docs.mjs, Swagger UI ${escapeHtml(version)}" />
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" href="./swagger-ui.css" />
    <link rel="icon" type="image/png" href="./favicon-32x32.png" sizes="32x32" />
    <link rel="icon" type="image/png" href="./favicon-16x16.png" sizes="16x16" />
    <style>body { margin: 0; }</style>
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="./swagger-ui-bundle.js"></script>
    <script src="./swagger-ui-standalone-preset.js"></script>
    <script src="./spec.js"></script>
    <script src="./init.js"></script>
  </body>
</html>
`,
  );
  // The spec is also embedded as a script so the page works from file:// (where fetch() of
  // openapi.json is blocked); openapi.json stays beside it for tools and downloads.
  writeFileSync(join(out, 'spec.js'), `window.PAYORCH_SPEC = ${JSON.stringify(spec)};\n`);
  writeFileSync(
    join(out, 'init.js'),
    `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    spec: window.PAYORCH_SPEC,
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'BaseLayout',
  });
});
`,
  );
  return [...ASSETS, 'openapi.json', 'index.html', 'spec.js', 'init.js'].map((f) => join(out, f));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const argv = process.argv.slice(2);
    const i = argv.indexOf('--out');
    if (argv.some((a, k) => a !== '--out' && k !== i + 1)) throw new Error('usage: docs.mjs [--out <folder>]');
    const out = i >= 0 ? resolve(process.cwd(), argv[i + 1] ?? '') : defaultOut;
    const files = buildDocs({ out });
    console.log(`API reference written to ${relative(process.cwd(), out) || '.'}/ (${files.length} files); open ${relative(process.cwd(), join(out, 'index.html'))}`);
  } catch (err) {
    console.error(`docs: ${err.message ?? err}`);
    process.exit(1);
  }
}
