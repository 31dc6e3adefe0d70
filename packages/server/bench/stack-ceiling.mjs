// The stack's own ceiling (issue 26): what the mandated stack costs with nothing of ours in it. Express 5,
// JSON parsing, this project's express-openapi-validator (patched, compiled on the service's own spec with
// the service's options: dist/http/validator.js) and one PostgreSQL read by primary key of a ~4 KB row
// (a prepared statement on a pg pool), answered as JSON. Every route of the bench's scenarios does exactly
// that. DATABASE_URL names the database it may make its one table in. Prints its URL on stdout.
import express from 'express';
import { createRequire } from 'node:module';
import pg from 'pg';
import { openApiValidator } from '../dist/http/validator.js';

const require = createRequire(import.meta.url);
const spec = require('@payorch/types/openapi.json');
const payment = spec.components.examples.PaymentRetrieved.value;

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
// A payment-sized row: the spec's example payment, padded to ~4 KB of JSON.
const row = { ...payment, metadata: [{ key: 'padding', value: 'x'.repeat(Math.max(0, 4096 - JSON.stringify(payment).length - 40)) }] };
await pool.query('CREATE TABLE IF NOT EXISTS bench_ceiling_rows (id text PRIMARY KEY, body jsonb NOT NULL)');
await pool.query('INSERT INTO bench_ceiling_rows (id, body) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body', ['ceiling', JSON.stringify(row)]);

const read = { name: 'ceiling_read', text: 'SELECT body FROM bench_ceiling_rows WHERE id = $1', values: ['ceiling'] };
async function answer(req, res, next) {
  try {
    const { rows } = await pool.query(read);
    res.status(req.method === 'POST' ? 201 : 200).json(rows[0].body);
  } catch (err) {
    next(err);
  }
}

const app = express();
app.disable('x-powered-by');
app.use(express.json({ limit: '15mb' }));
app.use(openApiValidator(false));
app.get('/v1/payments/:id', answer);
app.get('/v1/customers/:id', answer);
app.get('/v1/payments', answer);
app.get('/v1/customers/:id/payment-methods', answer);
app.post('/v1/customers/:id/payment-methods', answer);
app.post('/v1/customers', answer);
app.post('/v1/payments', answer);
app.post('/v1/payments/:id/transactions/:tid/dispute', answer);
// A request the validator refuses is an error of the bench's (its requests are the service's), shown as such.
app.use((err, _req, res, _next) => res.status(err.status ?? 500).json({ message: err.message }));
const server = app.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
