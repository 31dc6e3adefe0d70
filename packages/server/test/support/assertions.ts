/** Assertions shared by the contract tests: problem+json shape and spec conformance of bodies. */
import { createRequire } from 'node:module';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { STORABLE_FORMATS } from '../../src/http/formats.js';

const require = createRequire(import.meta.url);
const spec = require('@payorch/types/openapi.json') as Record<string, unknown>;

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
// `date` and `date-time` as the server reads them (years 0001–9999, offsets within ±15:59, …).
for (const [name, format] of Object.entries(STORABLE_FORMATS)) ajv.addFormat(name, format);
ajv.addSchema({ ...spec, $id: 'spec' }, 'spec');

/** Asserts the value matches a component schema of the spec. */
export function expectSchema(name: string, value: unknown): void {
  const validate = ajv.getSchema(`spec#/components/schemas/${name}`);
  if (!validate) throw new Error(`no schema ${name}`);
  const ok = validate(value);
  expect(ok, `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
}

/** Asserts an RFC 9457 problem with this status and code, and returns its body. */
export async function expectProblem(res: Response, status: number, code: string): Promise<Record<string, unknown>> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body.code).toBe(code);
  expect(body.status).toBe(status);
  expect(body.request_id).toBe(res.headers.get('x-request-id'));
  expectSchema('Problem', body);
  // Nothing internal leaks: no stack traces, no SQL.
  expect(text).not.toMatch(/\bat .+\.(ts|js):\d+|SELECT |INSERT |UPDATE |node_modules/);
  return body;
}
