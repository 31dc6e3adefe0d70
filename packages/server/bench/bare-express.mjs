// The ceiling: a bare Express 5 app answering a comparable JSON body (the spec's payment example),
// with JSON parsing and nothing else. Prints its URL on stdout.
import express from 'express';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const spec = require('@payorch/types/openapi.json');
const payment = spec.components.examples.PaymentRetrieved.value;
const customer = spec.components.examples.Customer.value;
const methods = spec.components.examples.PaymentMethodList.value;
const disputed = spec.components.examples.DisputedPayment.value;
const enrolled = spec.components.examples.EnrolledCard.value;
const created = spec.components.examples.PaymentCreated.value;

const app = express();
app.disable('x-powered-by');
app.use(express.json({ limit: '15mb' }));
app.get('/v1/payments/:id', (_req, res) => res.json(payment));
app.get('/v1/payments', (_req, res) => res.json({ data: [payment], has_more: false }));
app.get('/v1/customers/:id', (_req, res) => res.json(customer));
app.get('/v1/customers/:id/payment-methods', (_req, res) => res.json(methods));
app.post('/v1/customers/:id/payment-methods', (_req, res) => res.status(201).json(enrolled));
app.post('/v1/customers', (req, res) => res.status(201).json({ ...customer, merchant_customer_id: req.body.merchant_customer_id }));
app.post('/v1/payments', (_req, res) => res.status(201).json(created));
app.post('/v1/payments/:id/transactions/:tid/dispute', (_req, res) => res.json(disputed));
const server = app.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
