/**
 * The checks every connector makes before it sends an asynchronous payment (PIX, boleto, OXXO, …): a method
 * it issues, in the one currency the method settles in, with the payer's details the method needs. Nothing
 * is sent when one fails: the reason becomes the connector's "rejected before sending" result, an error the
 * route may move on from.
 */
import type { AsyncCharge, AsyncMethodType, AsyncPayer } from './provider.js';

export type AsyncPrecheck<M extends AsyncMethodType> = { ok: true; method: M } | { ok: false; reason: string };

export function precheckAsyncCharge<M extends AsyncMethodType>(
  provider: { id: string; name: string },
  methods: Readonly<Record<M, { currency: string }>>,
  input: AsyncCharge,
  missingPayerData: (method: M, payer: AsyncPayer | undefined) => string | null,
): AsyncPrecheck<M> {
  const method = input.method;
  if (!Object.hasOwn(methods, method)) return { ok: false, reason: `${provider.id} does not issue ${method} payments through payorch` };
  const issued = method as M;
  const currency = methods[issued].currency;
  if (input.currency !== currency) return { ok: false, reason: `${provider.name} takes ${method} payments in ${currency} only, not ${input.currency}` };
  const missing = missingPayerData(issued, input.payer);
  if (missing) return { ok: false, reason: `${provider.name} needs the payer's details for a ${method} payment: ${missing}` };
  return { ok: true, method: issued };
}
