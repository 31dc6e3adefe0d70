/**
 * The hosted pages' HTML: the card form (for a checkout session, a customer session or a payment link)
 * and the short notices shown instead of it (unknown, expired, canceled, not allowed here). Everything the
 * script needs is in a JSON data block (never executed, so the CSP can forbid inline scripts); the script
 * and the card rules are separate files from this origin.
 */
import type { Response } from 'express';
import { formatAmount, MESSAGES, type Language, type Messages } from './messages.js';
import { setPageHeaders, type PageSecurity } from './origins.js';

export const ASSETS_PATH = '/checkout/assets';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** JSON safe inside <script type="application/json">: no "</script>", no HTML comment openers. */
const jsonForScript = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

/** What the form's script is told (read from #checkout-config). */
export interface FormConfig {
  /** payment: a checkout session's token; enrollment: a customer session's card; link: pay a payment link here. */
  mode: 'payment' | 'enrollment' | 'link';
  /** Same-origin address the card goes to, with the public key as the only credential (link mode: from sessionUrl's answer). */
  submitUrl: string | null;
  /** Link mode: the same-origin address that makes the link's checkout session when the shopper first submits. */
  sessionUrl?: string | null;
  /** Enrollment: the fields sent beside `card_data` (account, country); null: `payment_method.card`. */
  submitBody: Record<string, string> | null;
  publicKey: string;
  /** Embedded: the only window origin the result is posted to. */
  parentOrigin: string | null;
  /** Not embedded: where the browser goes with the result (query parameters added). */
  callbackUrl: string | null;
  /** Link mode: the same-origin address that pays the link with the token. */
  completeUrl: string | null;
  /** What the result names (the session or link). */
  reference: { checkout_session?: string; customer_session?: string; payment_link?: string };
}

export interface Summary {
  merchant?: string | null;
  description?: string | null;
  amount?: { value: number; currency: string } | null;
}

function layout(lang: Language, title: string, body: string): string {
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" type="image/svg+xml" href="/favicon.svg">
<link rel="stylesheet" href="${ASSETS_PATH}/card-form.css">
<title>${escapeHtml(title)} · payorch</title>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

function summaryHtml(m: Messages, lang: Language, summary: Summary): string {
  const rows: [string, string][] = [];
  if (summary.merchant) rows.push([m.linkMerchant, summary.merchant]);
  if (summary.amount) rows.push([m.linkAmount, formatAmount(summary.amount.value, summary.amount.currency, lang)]);
  const description = summary.description ? `<p id="description">${escapeHtml(summary.description)}</p>` : '';
  if (rows.length === 0 && !description) return '';
  return `${description}<dl id="summary">${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('')}</dl>`;
}

const field = (id: string, label: string, attrs: string, hint?: string) => `<div class="field" id="${id}-field">
<label for="${id}">${escapeHtml(label)}${hint ? ` <span class="hint">(${escapeHtml(hint)})</span>` : ''}</label>
<input id="${id}" name="${id}" ${attrs} aria-describedby="${id}-error">
<p class="error" id="${id}-error"></p>
</div>`;

/** The card form page. */
export function sendFormPage(res: Response, options: { lang: Language; config: FormConfig; summary: Summary; security: PageSecurity }): void {
  const { lang, config, summary } = options;
  const m = MESSAGES[lang];
  const heading = config.mode === 'enrollment' ? m.enrollTitle : config.mode === 'link' ? m.linkTitle : m.cardTitle;
  const submit = config.mode === 'enrollment' ? m.save : summary.amount ? `${m.pay} ${formatAmount(summary.amount.value, summary.amount.currency, lang)}` : m.pay;
  setPageHeaders(res, options.security);
  res.status(200).send(
    layout(
      lang,
      m.title,
      `<h1>${escapeHtml(heading)}</h1>
${summaryHtml(m, lang, summary)}
<form id="card-form" novalidate autocomplete="on">
${field('holder', m.holder, 'type="text" autocomplete="cc-name" maxlength="26" required spellcheck="false"')}
<div class="field" id="number-field">
<label for="number">${escapeHtml(m.number)}</label>
<div class="with-brand"><input id="number" name="number" type="text" inputmode="numeric" autocomplete="cc-number" maxlength="23" required spellcheck="false" aria-describedby="number-brand number-error"><span id="number-brand" class="brand" aria-live="polite"></span></div>
<p class="error" id="number-error"></p>
</div>
<div class="row">
${field('expiry', m.expiry, 'type="text" inputmode="numeric" autocomplete="cc-exp" maxlength="7" required placeholder="' + escapeHtml(m.expiryHint) + '"', m.expiryHint)}
${field('security-code', m.securityCode, 'type="text" inputmode="numeric" autocomplete="cc-csc" maxlength="4" required')}
</div>
<p id="form-error" class="error" role="alert"></p>
<button type="submit" id="submit">${escapeHtml(submit)}</button>
<p id="status" role="status" aria-live="polite"></p>
</form>
<script id="checkout-config" type="application/json">${jsonForScript({ ...config, lang, messages: m })}</script>
<script src="${ASSETS_PATH}/card-rules.js"></script>
<script src="${ASSETS_PATH}/card-form.js"></script>`,
    ),
  );
}

/** A notice instead of the form (unknown or finished session or link, not allowed in this frame). */
export function sendNoticePage(res: Response, options: { status: number; lang: Language; text: string; code: string; summary?: Summary; security?: PageSecurity }): void {
  const m = MESSAGES[options.lang];
  setPageHeaders(res, options.security ?? {});
  res
    .status(options.status)
    .send(layout(options.lang, m.title, `<h1>${escapeHtml(m.title)}</h1>\n${options.summary ? summaryHtml(m, options.lang, options.summary) : ''}<p id="notice" data-code="${escapeHtml(options.code)}" role="alert">${escapeHtml(options.text)}</p>`));
}

