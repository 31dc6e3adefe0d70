#!/usr/bin/env node
/**
 * Reports the bundled size of @payorch/client (run after `npm run build`): the browser bundle of the
 * whole entry, the same without openapi-fetch, and a tree-shaken app that only creates a client. Uses
 * rolldown (vite's bundler, already installed); gzip via node:zlib. Fails if the browser bundle pulls
 * in a Node built-in. `--json` prints the numbers as JSON.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'rolldown';

const root = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(`${root}dist/index.js`)) {
  console.error('dist/ is missing: run `npm run build -w @payorch/client` first');
  process.exit(1);
}

async function measure(name, { input, code, external = [] }) {
  const result = await build({
    cwd: root,
    input: code ? 'virtual-entry' : input,
    platform: 'browser',
    write: false,
    external,
    logLevel: 'silent',
    plugins: code
      ? [{ name: 'virtual', resolveId: (id) => (id === 'virtual-entry' ? id : null), load: (id) => (id === 'virtual-entry' ? code : null) }]
      : [],
    output: { format: 'esm', minify: true },
  });
  const bundle = result.output.filter((c) => c.type === 'chunk').map((c) => c.code).join('\n');
  const nodeImports = bundle.match(/["']node:[a-z/_]+["']/g);
  if (nodeImports && name.startsWith('browser')) throw new Error(`${name} imports Node built-ins: ${[...new Set(nodeImports)].join(', ')}`);
  return { name, minified: bundle.length, gzip: gzipSync(bundle).length };
}

const rows = [
  await measure('browser: @payorch/client (everything, with openapi-fetch)', { input: 'dist/index.js' }),
  await measure('browser: @payorch/client without openapi-fetch', { input: 'dist/index.js', external: ['openapi-fetch'] }),
  await measure('browser: app using only createPayorchClient (tree-shaken)', {
    code: `import { createPayorchClient } from './dist/index.js'; export const c = createPayorchClient({ baseUrl: '/v1', publicApiKey: 'pk', privateSecretKey: 'sk' });`,
  }),
  await measure('browser: verifyWebhook only (tree-shaken)', { code: `export { verifyWebhook } from './dist/index.js';` }),
  await measure('node: @payorch/client/node', { input: 'dist/node.js', external: [/^node:/] }),
];

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(rows));
} else {
  const kb = (n) => `${(n / 1024).toFixed(1)} kB`.padStart(9);
  console.log(`${'bundle'.padEnd(62)} ${'minified'.padStart(9)} ${'gzip'.padStart(9)}`);
  for (const r of rows) console.log(`${r.name.padEnd(62)} ${kb(r.minified)} ${kb(r.gzip)}`);
}
