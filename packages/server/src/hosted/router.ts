/**
 * The hosted pages, outside the versioned API (HTML for shoppers, like /docs):
 *
 *   GET  /checkout/sessions/:id            the card form for a checkout session → one-time token
 *   GET  /checkout/customer-sessions/:id   the card form for a customer session → card enrolled
 *   GET  /checkout/links/:code             a payment link: amount, description and the card form
 *   POST /checkout/links/:code/pay         the link page's script pays the link with its token
 *   GET  /checkout/assets/{card-form.js, card-form.css, card-rules.js}
 *
 * Query of the form pages: `public_key` (the organization's public key: the only credential the form
 * sends), `parent_origin` (the embedding page's origin, one of the session's allowed origins) and `lang`
 * (en, es, pt). Every page has a strict CSP (origins.ts); the card itself goes from the form's script to
 * the API (`POST /v1/checkout/sessions/{id}/token`, `POST /v1/customers/sessions/{id}/payment-methods`),
 * never through these routes.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../context.js';
import { cardRulesScript } from './card-rules.js';
import { chooseLanguage, MESSAGES, type Language } from './messages.js';
import { chooseParentOrigin, originOf } from './origins.js';
import { ASSETS_PATH, sendFormPage, sendNoticePage, type FormConfig } from './page.js';
import type { HostedSources } from './sources.js';

/** packages/server/assets/checkout, from src/hosted and dist/hosted alike. */
const ASSET_DIR = fileURLToPath(new URL('../../assets/checkout/', import.meta.url));
const API = '/v1';
const ID = /^[0-9A-Za-z-]{36,64}$/;

const ASSETS: Readonly<Record<string, { type: string; body: () => string }>> = {
  'card-form.js': { type: 'text/javascript; charset=utf-8', body: () => readFileSync(`${ASSET_DIR}card-form.js`, 'utf8') },
  'card-form.css': { type: 'text/css; charset=utf-8', body: () => readFileSync(`${ASSET_DIR}card-form.css`, 'utf8') },
  'card-rules.js': { type: 'text/javascript; charset=utf-8', body: () => cardRulesScript().body },
};

const text = (v: unknown) => (typeof v === 'string' ? v : undefined);

export function hostedPagesRouter(deps: AppDeps, sources: HostedSources): Router {
  const router = Router();
  const assetCache = new Map<string, string>();

  router.get(`${ASSETS_PATH}/:file`, (req, res, next) => {
    const asset = ASSETS[req.params.file];
    if (!asset) return next();
    let body = assetCache.get(req.params.file);
    if (body === undefined) assetCache.set(req.params.file, (body = asset.body()));
    // Short-lived: a deployment changes the script and the page must not run an old one for long.
    res.set({ 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' }).send(body);
  });

  /** The public key the form will send, when it is an active key of `organizationId`. */
  const keyFor = async (req: Request, organizationId: string): Promise<string | undefined> => {
    const key = text(req.query.public_key);
    if (!key || key.length > 128) return undefined;
    return (await sources.organizationOfPublicKey(deps, key)) === organizationId ? key : undefined;
  };

  const unavailable = (res: Response, lang: Language, code = 'NOT_FOUND', status = 404) =>
    sendNoticePage(res, { status, lang, code, text: MESSAGES[lang].sessionUnavailable });

  /**
   * The embedding decision shared by both session pages: with `parent_origin` (or embedded by default)
   * the form is framed by that allowed origin only; without allowed origins it is a top-level page that
   * returns to `callback_url`.
   */
  const framing = (req: Request, session: { allowedOrigins: string[]; callbackUrl: string | null }) => {
    const requested = req.query.parent_origin;
    if (requested === undefined && session.allowedOrigins.length === 0) return { ok: true as const, parentOrigin: null };
    const parentOrigin = chooseParentOrigin(requested, session.allowedOrigins);
    return parentOrigin ? { ok: true as const, parentOrigin } : { ok: false as const };
  };

  router.get('/checkout/sessions/:id', async (req, res) => {
    const id = req.params.id;
    const session = ID.test(id) ? await sources.checkoutSession(deps, id) : undefined;
    const lang = chooseLanguage(req.query.lang, session?.country);
    if (!session) return unavailable(res, lang);
    if (!session.open) return sendNoticePage(res, { status: 410, lang, code: 'CLOSED', text: MESSAGES[lang].errorSession });
    const publicKey = await keyFor(req, session.organizationId);
    if (!publicKey) return unavailable(res, lang);
    const frame = framing(req, session);
    if (!frame.ok) return sendNoticePage(res, { status: 403, lang, code: 'ORIGIN_NOT_ALLOWED', text: MESSAGES[lang].notAllowed });
    const callbackUrl = originOf(session.callbackUrl) ? session.callbackUrl : null;
    const config: FormConfig = {
      mode: 'payment',
      submitUrl: `${API}/checkout/sessions/${encodeURIComponent(id)}/token`,
      submitBody: null,
      publicKey,
      parentOrigin: frame.parentOrigin,
      callbackUrl,
      completeUrl: null,
      reference: { checkout_session: id },
    };
    sendFormPage(res, {
      lang,
      config,
      summary: { merchant: session.organizationName, description: session.description, amount: session.amount },
      security: { frameAncestor: frame.parentOrigin ?? undefined },
    });
  });

  router.get('/checkout/customer-sessions/:id', async (req, res) => {
    const id = req.params.id;
    const session = ID.test(id) ? await sources.customerSession(deps, id) : undefined;
    const lang = chooseLanguage(req.query.lang, session?.country);
    if (!session) return unavailable(res, lang);
    if (!session.open) return sendNoticePage(res, { status: 410, lang, code: 'CLOSED', text: MESSAGES[lang].errorSession });
    const publicKey = await keyFor(req, session.organizationId);
    if (!publicKey) return unavailable(res, lang);
    const frame = framing(req, session);
    if (!frame.ok) return sendNoticePage(res, { status: 403, lang, code: 'ORIGIN_NOT_ALLOWED', text: MESSAGES[lang].notAllowed });
    const config: FormConfig = {
      mode: 'enrollment',
      submitUrl: `${API}/customers/sessions/${encodeURIComponent(id)}/payment-methods`,
      submitBody: { account_id: session.accountId, payment_method_type: 'CARD', country: session.country },
      publicKey,
      parentOrigin: frame.parentOrigin,
      callbackUrl: originOf(session.callbackUrl) ? session.callbackUrl : null,
      completeUrl: null,
      reference: { customer_session: id },
    };
    sendFormPage(res, { lang, config, summary: { merchant: session.organizationName }, security: { frameAncestor: frame.parentOrigin ?? undefined } });
  });

  const linkNotice = (res: Response, lang: Language, status: string) => {
    const m = MESSAGES[lang];
    const [code, textOf, http] =
      status === 'CANCELED' ? ['CANCELED', m.linkCanceled, 410] : status === 'EXPIRED' ? ['EXPIRED', m.linkExpired, 410] : status === 'PAID' ? ['PAID', m.linkPaid, 410] : ['NOT_FOUND', m.linkUnavailable, 404];
    return sendNoticePage(res, { status: http as number, lang, code: code as string, text: textOf as string });
  };

  router.get('/checkout/links/:code', async (req, res) => {
    const code = req.params.code;
    const link = ID.test(code) ? await sources.paymentLink(deps, code) : undefined;
    const lang = chooseLanguage(req.query.lang, link?.country);
    if (!link || link.status !== 'ACTIVE') return linkNotice(res, lang, link?.status ?? 'NOT_FOUND');
    const checkout = await sources.linkCheckout(deps, link);
    const config: FormConfig = {
      mode: 'link',
      submitUrl: `${API}/checkout/sessions/${encodeURIComponent(checkout.checkoutSessionId)}/token`,
      submitBody: null,
      publicKey: checkout.publicKey,
      parentOrigin: null,
      callbackUrl: null,
      completeUrl: `/checkout/links/${encodeURIComponent(code)}/pay`,
      reference: { payment_link: code },
    };
    // A link page is a top-level page: nobody may frame it (no clickjacking of the pay button).
    sendFormPage(res, { lang, config, summary: { merchant: link.organizationName, description: link.description, amount: link.amount }, security: {} });
  });

  router.post('/checkout/links/:code/pay', express.json({ limit: '1kb', strict: true }), async (req, res) => {
    const token = text((req.body as Record<string, unknown> | undefined)?.token);
    // Same-origin only: the page's own script. A cross-site form or fetch carries another Origin.
    const origin = req.get('origin');
    const own = [`${req.protocol}://${req.get('host')}`, originOf(deps.config.publicBaseUrl)];
    if (origin !== undefined && !own.includes(origin)) return res.status(403).json({ error: 'ORIGIN_NOT_ALLOWED' });
    if (!ID.test(req.params.code) || !token || token.length > 128) return res.status(400).json({ error: 'INVALID_REQUEST' });
    const outcome = await sources.payLink(deps, req.params.code, token);
    res.set('Cache-Control', 'no-store');
    if (outcome.kind === 'paid') return res.status(200).json({ paid: true, status: outcome.paymentStatus });
    if (outcome.kind === 'declined') return res.status(200).json({ paid: false, status: outcome.paymentStatus });
    if (outcome.kind === 'unavailable') return res.status(outcome.status === 'NOT_FOUND' ? 404 : 409).json({ error: outcome.status });
    return res.status(422).json({ error: 'INVALID_TOKEN', message: outcome.message });
  });

  return router;
}
