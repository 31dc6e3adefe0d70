/**
 * The service's icon at /favicon.ico and /favicon.svg. Browsers ask for /favicon.ico on any page that
 * declares no icon (a JSON answer opened in a tab, a page a future feature adds): answering 404 there is
 * a console error in every browser test and in every user's developer tools. The docs site declares the
 * same file (dist/docs/favicon.svg, copied from docs/assets/ by tools/docs.mjs); an SVG served as
 * image/svg+xml is accepted at /favicon.ico by current browsers.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';

/** The source file, for a server run from src/ before the docs site was built (tools/dev.mjs). */
const SOURCE = fileURLToPath(new URL('../../../../docs/assets/favicon.svg', import.meta.url));

export function faviconRouter(docsSite: string): express.Router {
  const built = join(docsSite, 'favicon.svg');
  const svg = readFileSync(existsSync(built) ? built : SOURCE);
  const router = express.Router();
  router.get(['/favicon.ico', '/favicon.svg'], (_req, res) => {
    res.set({ 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' }).send(svg);
  });
  return router;
}
