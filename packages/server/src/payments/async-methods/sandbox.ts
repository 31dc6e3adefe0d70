/**
 * Sandbox mode: a pending asynchronous payment paid, declined, expired or cancelled on demand
 * (POST /v1/sandbox/payments/{payment_id}/outcome, and the wallet page's buttons). Not a shortcut: the
 * sandbox acquirer that issued the action records the outcome in its ledger (a payment past its deadline
 * there is EXPIRED whatever was asked), builds and signs the notification it sends, and that goes through
 * the per-connection notifications path exactly as one arriving over HTTP (signature, deduplication, the
 * payment locked, settle.ts).
 */
import type { Schemas } from '@payorch/types';
import type { AppDeps } from '../../context.js';
import { problem } from '../../http/problems.js';
import { ProviderUnavailableError, type SimulatedAsyncOutcome } from '../../providers/provider.js';
import { receiveConnectionNotification } from '../provider-notifications/receive.js';
import { paymentsRepository as payments } from '../repository.js';
import { retrievePayment } from '../retrieve-payment.js';
import { WAITING } from './methods.js';
import { asyncPaymentsRepository as repo } from './repository.js';

export type SandboxOutcomeResult =
  | { ok: true; payment: Schemas['Payment'] }
  | {
      ok: false;
      problem: ReturnType<typeof problem<'PAYMENT_NOT_FOUND'>> | ReturnType<typeof problem<'INVALID_STATUS'>> | ReturnType<typeof problem<'PROVIDER_UNAVAILABLE'>>;
    };

export async function settleSandboxPending(
  deps: Pick<AppDeps, 'db' | 'log' | 'services'>,
  organizationId: string,
  paymentId: string,
  outcome: SimulatedAsyncOutcome['outcome'],
): Promise<SandboxOutcomeResult> {
  const { db, services } = deps;
  const payment = await payments.findPayment(db, organizationId, paymentId);
  if (!payment) return { ok: false, problem: problem('PAYMENT_NOT_FOUND', `No payment ${paymentId}.`) };
  const attempt = await repo.waitingAttempt(db, payment.id);
  const provider = attempt && services.providers.get(attempt.provider_id);
  const connection = attempt && (await services.orchestration.routing.openConnection(db, organizationId, attempt.connection_id));
  if (payment.status !== WAITING.status || payment.sub_status !== WAITING.subStatus || !attempt || !provider?.simulateAsyncOutcome || !connection) {
    return {
      ok: false,
      problem: problem('INVALID_STATUS', `The payment is ${payment.status} / ${payment.sub_status}; only an asynchronous payment waiting for the shopper (PENDING / PENDING) can be settled here.`),
    };
  }
  let signed;
  try {
    signed = await provider.simulateAsyncOutcome({ providerTransactionId: attempt.provider_transaction_id, outcome, connection: connection.context });
  } catch (err) {
    if (err instanceof ProviderUnavailableError) {
      return { ok: false, problem: problem('PROVIDER_UNAVAILABLE', `${provider.id} did not answer; the payment is unchanged unless its notification arrives.`) };
    }
    throw err;
  }
  await receiveConnectionNotification(
    { db, providers: services.providers, connectionBox: services.connectionBox, log: deps.log },
    attempt.connection_id,
    signed.rawBody,
    { ...signed.headers },
  );
  return { ok: true, payment: (await retrievePayment(db, organizationId, payment.id, { rawResponse: false, transactionsHistory: false }))! };
}
