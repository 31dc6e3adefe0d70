// Times the validator middleware alone on a dispute body with N empty evidence items.
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { createRequire } from 'node:module';
const require = createRequire(process.cwd() + '/');
const spec = require('@payorch/types/openapi.json');
const allErrors = process.argv[2] === 'all';
const ns = process.argv.slice(3).map(Number);
const app = express();
app.use(express.json({ limit: '50mb' }));
app.use(OpenApiValidator.middleware({ apiSpec: structuredClone(spec), validateRequests: { allErrors, allowUnknownQueryParameters: false }, validateResponses: false, validateSecurity: false, ignoreUndocumented: true }));
app.use((req, res) => res.json({ ok: true }));
app.use((err, req, res, next) => res.status(err.status ?? 500).json({ n: err.errors?.length, len: JSON.stringify(err.errors ?? []).length }));
const server = app.listen(0);
const port = server.address().port;
for (const n of ns) {
  const body = JSON.stringify({ evidence: Array.from({ length: n }, () => ({})) });
  const t = performance.now();
  const r = await fetch(`http://127.0.0.1:${port}/v1/payments/a1b2c3d4-0000-4000-8000-000000000001/transactions/a1b2c3d4-0000-4000-8000-000000000002/dispute`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-idempotency-key': 'k1' }, body });
  const j = await r.text();
  console.log(allErrors ? 'allErrors' : 'first', n, r.status, Math.round(performance.now() - t), 'ms', j.slice(0, 80));
}
server.close();
