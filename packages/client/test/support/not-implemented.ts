/**
 * THE ONLY PLACE where a behaviour test accepts `501 NOT_IMPLEMENTED`.
 *
 * Some server operations are still being built and answer 501 after the request passed routing,
 * authentication and the spec's request validation (a malformed request would be a 400 instead, a missing
 * credential a 401). So a 501 naming the expected operation proves that the client reached the right
 * operation with a well-formed request, which is all a client test can check until the operation exists.
 *
 * To make the suite strict, empty `MAY_BE_NOT_IMPLEMENTED` (or remove each operation as it lands), or run
 * with PAYORCH_CLIENT_STRICT=1: then a 501 fails the test like any other unexpected status.
 *
 * The same switch governs the one other allowance, `expectEventDeliveredOrNotYetEmitted`: webhook
 * endpoints exist, but the domains may not record events yet, so a delivery may never come.
 */
import type { operations } from '@payorch/types';
import { afterAll, expect } from 'vitest';
import { PayorchError } from '../../src/index.js';

type OperationId = keyof operations;

/** Operations allowed to answer 501: none — every operation of the spec is implemented on the server. */
export const MAY_BE_NOT_IMPLEMENTED: ReadonlySet<OperationId> = new Set<OperationId>([]);

const STRICT = process.env.PAYORCH_CLIENT_STRICT === '1';

/** Operations that answered 501 in this test file; listed after the file's tests so the leniency stays visible. */
export const answeredNotImplemented = new Set<string>();
afterAll(() => {
  if (answeredNotImplemented.size > 0) {
    console.info(`[${expect.getState().testPath?.split('/').pop()}] accepted for now (not implemented on the server yet): ${[...answeredNotImplemented].sort().join(', ')}`);
  }
});

function acceptNotImplemented(operationId: OperationId, status: number, body: unknown): boolean {
  if (status !== 501) return false;
  if (STRICT || !MAY_BE_NOT_IMPLEMENTED.has(operationId)) {
    throw new Error(`${operationId} answered 501 NOT_IMPLEMENTED, and this run is strict about it: ${JSON.stringify(body)}`);
  }
  // The server's 501 names the operation it routed to: the client reached the right one, validated.
  expect(body).toMatchObject({ status: 501, code: 'NOT_IMPLEMENTED', request_id: expect.any(String) });
  expect((body as { detail?: string }).detail).toContain(operationId);
  answeredNotImplemented.add(operationId);
  return true;
}

type RawResult = { data?: unknown; error?: unknown; response: Response };

/**
 * For a raw `client.GET/POST/...` call: asserts the expected status and returns the result, or returns
 * undefined when the operation is allowed to be unimplemented and answered 501.
 */
export async function expectImplementedOr501<R extends RawResult>(operationId: OperationId, call: Promise<R>, expectedStatus: number): Promise<R | undefined>;
/** For a resource-layer call (returns data or throws PayorchError): the data, or undefined on an allowed 501. */
export async function expectImplementedOr501<T>(operationId: OperationId, call: Promise<T>): Promise<T | undefined>;
export async function expectImplementedOr501(operationId: OperationId, call: Promise<unknown>, expectedStatus?: number): Promise<unknown> {
  let outcome: unknown;
  try {
    outcome = await call;
  } catch (err) {
    if (err instanceof PayorchError && acceptNotImplemented(operationId, err.status, err.problem)) return undefined;
    throw err;
  }
  if (expectedStatus === undefined) return outcome;
  const { response, error } = outcome as RawResult;
  if (acceptNotImplemented(operationId, response.status, error)) return undefined;
  expect(response.status, `${operationId} answered ${JSON.stringify(error)}`).toBe(expectedStatus);
  return outcome;
}

/** Set to false (or run with PAYORCH_CLIENT_STRICT=1) once payments record their webhook events. */
export const EVENTS_MAY_NOT_BE_EMITTED_YET = false;

/**
 * Whether a webhook delivery for the event came. None: fails the test when strict, else returns false
 * (noted in the file's summary) so the caller skips the parts that need a delivery.
 */
export function expectEventDeliveredOrNotYetEmitted<T>(delivery: T | undefined, event: string): delivery is T {
  if (delivery !== undefined) return true;
  if (STRICT || !EVENTS_MAY_NOT_BE_EMITTED_YET) throw new Error(`no webhook delivery for ${event}: the server did not record the event`);
  answeredNotImplemented.add(`(no ${event} event delivered)`);
  return false;
}
