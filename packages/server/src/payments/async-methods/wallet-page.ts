/**
 * The sandbox redirect wallet's page (PAYPAL, MERCADO_PAGO_WALLET, APPLE_PAY): the `redirect_url` of a pending wallet
 * payment. The shopper approves or cancels; the sandbox acquirer that issued the payment settles it and
 * notifies (sandbox.ts: the same path as POST /v1/sandbox/payments/{payment_id}/outcome), and the browser is
 * sent (303) to the payment's `callback_url` with `payment_id` and `status` added, when it has one. Not
 * part of the API contract (HTML for people), so mounted beside it, in sandbox mode only.
 *
 *   GET  /v1/sandbox/payments/:payment_id/wallet   the page
 *   POST /v1/sandbox/payments/:payment_id/wallet   decision=approve|cancel (a form post)
 *
 * The payment's unguessable id is the page's only credential: it shows the merchant, the amount and
 * nothing about the shopper.
 */
import express, { Router, type Response } from 'express';
import type { AppDeps } from '../../context.js';
import { API_BASE_PATH } from '../../http/spec.js';
import { decisionForm, escapeHtml, sendPage } from '../../vault/sandbox-pages.js';
import { paymentsRepository as payments, type PaymentRow } from '../repository.js';
import { settleSandboxPending } from './sandbox.js';
import { WAITING } from './methods.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The pending wallet payment of that id, whichever organization it belongs to (the id is the credential). */
async function walletPayment(deps: Pick<AppDeps, 'db'>, id: string): Promise<PaymentRow | undefined> {
  if (!UUID.test(id)) return undefined;
  const rows = await deps.db.query<{ organization_id: string }>('SELECT organization_id FROM payments WHERE id = $1', [id.toLowerCase()]);
  const payment = rows[0] && (await payments.findPayment(deps.db, rows[0].organization_id, id.toLowerCase()));
  return payment && (payment.payment_method as { payment_method_detail?: { wallet?: unknown } } | null)?.payment_method_detail?.wallet ? payment : undefined;
}

function callbackOf(p: PaymentRow): string | undefined {
  if (!p.callback_url) return undefined;
  try {
    const url = new URL(p.callback_url);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    url.searchParams.set('payment_id', p.id);
    url.searchParams.set('status', p.status);
    return url.toString();
  } catch {
    return undefined;
  }
}

function finished(res: Response, status: number, p: PaymentRow): void {
  const target = callbackOf(p);
  sendPage(
    res,
    status,
    'Payment finished',
    `<h1>Payment ${escapeHtml(p.status.toLowerCase())}</h1>
<p id="outcome" data-status="${escapeHtml(p.status)}">This payment is ${escapeHtml(p.status)}.</p>
${target ? `<p><a id="continue" href="${escapeHtml(target)}">Return to the merchant</a></p>` : '<p>You can close this window.</p>'}`,
  );
}

export function walletPageRouter(deps: Pick<AppDeps, 'db' | 'log' | 'services'>): Router {
  const router = Router();
  const path = `${API_BASE_PATH}/sandbox/payments/:payment_id/wallet`;
  const notFound = (res: Response) => sendPage(res, 404, 'Payment not found', '<h1>Payment not found</h1><p>This payment link is not valid.</p>');

  router.get(path, async (req, res) => {
    const p = await walletPayment(deps, req.params.payment_id);
    if (!p) return notFound(res);
    if (p.status !== WAITING.status || p.sub_status !== WAITING.subStatus) return finished(res, 200, p);
    const target = callbackOf(p);
    sendPage(
      res,
      200,
      'Approve payment',
      `<h1>Pay ${escapeHtml(p.amount_value)} ${escapeHtml(p.currency)}</h1>
<p>${escapeHtml(p.description)} — with your ${escapeHtml(String((p.payment_method as { type?: string }).type))} wallet.</p>
${decisionForm(`${API_BASE_PATH}/sandbox/payments/${p.id}/wallet`, { value: 'cancel', label: 'Cancel' }, { value: 'approve', label: 'Approve' })}`,
      target ? { formTarget: target } : {},
    );
  });

  router.post(path, express.urlencoded({ extended: false, limit: '1kb', parameterLimit: 5 }), async (req, res) => {
    const decision = (req.body as Record<string, unknown> | undefined)?.decision;
    if (decision !== 'approve' && decision !== 'cancel') return sendPage(res, 400, 'Invalid answer', '<h1>Invalid answer</h1><p>Choose Approve or Cancel.</p>');
    const p = await walletPayment(deps, req.params.payment_id);
    if (!p) return notFound(res);
    if (p.status !== WAITING.status || p.sub_status !== WAITING.subStatus) return finished(res, 409, p);
    const outcome = await settleSandboxPending(deps, p.organization_id, p.id, decision === 'approve' ? 'PAY' : 'CANCEL');
    if (!outcome.ok) return sendPage(res, outcome.problem.status, 'Not settled', `<h1>Not settled</h1><p>${escapeHtml(outcome.problem.body.detail ?? '')}</p>`);
    const after = (await payments.findPayment(deps.db, p.organization_id, p.id))!;
    deps.log.info({ paymentId: p.id, status: after.status }, 'sandbox wallet payment decided by the shopper');
    const target = callbackOf(after);
    if (target) return res.redirect(303, target);
    return finished(res, 200, after);
  });

  return router;
}
