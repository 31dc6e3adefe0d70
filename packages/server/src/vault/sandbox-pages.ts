/**
 * The sandbox provider's hosted enrollment page for non-card methods (ACH, wallet): the `redirect_url`
 * of a READY_TO_ENROLL method. The customer approves or declines; the method becomes ENROLLED or
 * DECLINED and the browser is sent (303) to the merchant's `callback_url` with `vaulted_token` and
 * `status` added to its query. Not part of the API contract (HTML for people), so mounted beside it.
 *
 *   GET  /v1/sandbox/enrollments/:vaulted_token   the page
 *   POST /v1/sandbox/enrollments/:vaulted_token   decision=approve|decline (a form post)
 *
 * The unguessable vaulted_token is the page's only credential, so the page shows nothing sensitive
 * (masked account only) and sends no Referer.
 */
import { randomBytes } from 'node:crypto';
import express, { Router, type Response } from 'express';
import type { AppDeps } from '../context.js';
import { linkBase } from '../platform/config.js';
import { API_BASE_PATH } from '../http/spec.js';
import { brandIconUrl, iconSlugFor } from './brand-icons.js';
import { effectiveStatus, maskedName, type MaskedDetails } from './mapper.js';
import type { PaymentMethodRow } from './repository.js';
import { completeHostedEnrollment, findHostedEnrollment, type HostedDecision, type HostedEnrollment } from './service.js';

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const TYPE_LABEL: Readonly<Record<string, string>> = {
  ACH_ENROLLMENT: 'ACH bank account',
  WALLET_PAY_ENROLLMENT: 'Wallet',
};

/** Where the customer goes afterwards: the merchant's callback with the outcome in the query. */
export function callbackTarget(row: Pick<PaymentMethodRow, 'callback_url' | 'vaulted_token' | 'status'>): string | undefined {
  if (!row.callback_url) return undefined;
  let url: URL;
  try {
    url = new URL(row.callback_url);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  url.searchParams.set('vaulted_token', row.vaulted_token);
  url.searchParams.set('status', row.status);
  return url.toString();
}

/** The shopper's two answers, posted back to `action` as `decision` (the refusing one first). */
export function decisionForm(action: string, refuse: { value: string; label: string }, approve: { value: string; label: string }): string {
  return `<form method="post" action="${escapeHtml(action)}">
<div class="actions">
<button type="submit" name="decision" value="${escapeHtml(refuse.value)}">${escapeHtml(refuse.label)}</button>
<button type="submit" name="decision" value="${escapeHtml(approve.value)}">${escapeHtml(approve.label)}</button>
</div>
</form>`;
}

export function sendPage(res: Response, status: number, title: string, content: string, options: { formTarget?: string } = {}): void {
  const nonce = randomBytes(16).toString('base64');
  const formAction = ["'self'", ...(options.formTarget ? [new URL(options.formTarget).origin] : [])].join(' ');
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      // form-action must allow the callback's origin: browsers check the redirect after the form post too.
      'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    })
    .send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" type="image/svg+xml" href="/favicon.svg">
<title>${escapeHtml(title)} · payorch sandbox</title>
<style nonce="${nonce}">
body { font-family: system-ui, sans-serif; background: #f4f6f8; color: #1f2933; margin: 0; }
main { max-width: 28rem; margin: 4rem auto; background: #fff; border-radius: 12px; padding: 2rem; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
.badge { display: inline-block; font-size: .75rem; font-weight: 600; color: #8a5a00; background: #fff4d6; border-radius: 4px; padding: .15rem .5rem; }
dl { display: grid; grid-template-columns: auto 1fr; gap: .4rem 1rem; }
dt { color: #616e7c; } dd { margin: 0; }
.actions { display: flex; gap: 1rem; margin-top: 1.5rem; }
button { flex: 1; font-size: 1rem; padding: .75rem; border-radius: 8px; border: 1px solid #cbd2d9; cursor: pointer; background: #fff; }
button[value=approve] { background: #0b7a4b; border-color: #0b7a4b; color: #fff; }
a { color: #0b69a3; }
</style>
</head>
<body><main>
<span class="badge">SANDBOX</span>
${content}
</main></body>
</html>
`);
}

function details(row: HostedEnrollment): string {
  const d = (row.details ?? {}) as MaskedDetails;
  const rows: [string, string][] = [
    ['Merchant', row.organization_name],
    ['Method', TYPE_LABEL[row.type] ?? row.type],
    ['Account', maskedName(row)],
    ...(d.bank_name ? ([['Bank', d.bank_name]] as [string, string][]) : []),
    ['Country', row.country],
  ];
  // Relative: the page and its images share an origin whatever PUBLIC_BASE_URL says.
  const icon = brandIconUrl('', iconSlugFor(row.type, null));
  return `<p><img src="${escapeHtml(icon)}" alt="" width="64" height="40"></p>
<dl>${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('')}</dl>`;
}

function finishedPage(res: Response, status: number, row: HostedEnrollment | PaymentMethodRow, note: string): void {
  const target = callbackTarget(row);
  sendPage(
    res,
    status,
    'Enrollment finished',
    `<h1>${row.status === 'ENROLLED' ? 'Enrollment approved' : row.status === 'DECLINED' ? 'Enrollment declined' : `Enrollment ${escapeHtml(row.status)}`}</h1>
<p id="outcome" data-status="${escapeHtml(row.status)}">${escapeHtml(note)}</p>
${target ? `<p><a id="continue" href="${escapeHtml(target)}">Return to the merchant</a></p>` : '<p>You can close this window.</p>'}`,
  );
}

export function sandboxPagesRouter(deps: Pick<AppDeps, 'db' | 'log' | 'config'>): Router {
  const router = Router();
  const path = `${API_BASE_PATH}/sandbox/enrollments/:vaulted_token`;
  const notFound = (res: Response) =>
    sendPage(res, 404, 'Enrollment not found', '<h1>Enrollment not found</h1><p>This enrollment link is not valid.</p>');

  router.get(path, async (req, res) => {
    const row = await findHostedEnrollment(deps.db, req.params.vaulted_token);
    if (!row) return notFound(res);
    const status = effectiveStatus(row, new Date());
    if (status !== 'READY_TO_ENROLL') return finishedPage(res, 200, row, `This enrollment is already ${status}.`);
    const target = row.callback_url ? callbackTarget(row) : undefined;
    sendPage(
      res,
      200,
      'Approve enrollment',
      `<h1>Enroll your ${escapeHtml(TYPE_LABEL[row.type] ?? row.type)}</h1>
<p>${escapeHtml(row.organization_name)} asks to save this payment method for future payments.</p>
${details(row)}
${decisionForm(`${API_BASE_PATH}/sandbox/enrollments/${row.vaulted_token}`, { value: 'decline', label: 'Decline' }, { value: 'approve', label: 'Approve' })}`,
      target ? { formTarget: target } : {},
    );
  });

  router.post(path, express.urlencoded({ extended: false, limit: '1kb', parameterLimit: 5 }), async (req, res) => {
    const decision = (req.body as Record<string, unknown> | undefined)?.decision;
    if (decision !== 'approve' && decision !== 'decline') {
      return sendPage(res, 400, 'Invalid answer', '<h1>Invalid answer</h1><p>Choose Approve or Decline.</p>');
    }
    const outcome = await completeHostedEnrollment(deps.db, req.params.vaulted_token, decision as HostedDecision, linkBase(deps.config));
    if (outcome.kind === 'not-found') return notFound(res);
    if (outcome.kind === 'conflict') {
      return finishedPage(res, 409, outcome.row, `This enrollment was already ${outcome.row.status}; it cannot be changed.`);
    }
    if (outcome.kind === 'completed') {
      deps.log.info({ vaultedToken: outcome.row.vaulted_token, status: outcome.row.status }, 'sandbox enrollment completed by the customer');
    }
    const target = callbackTarget(outcome.row);
    if (target) return res.redirect(303, target);
    return finishedPage(res, 200, outcome.row, outcome.row.status === 'ENROLLED' ? 'Your payment method was saved.' : 'Nothing was saved.');
  });

  return router;
}
