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
import type { HostedSources, LinkCheckout } from './sources.js';

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

/** The origin the shopper's browser sees payorch at: PUBLIC_BASE_URL's, else the request's own. */
function pageOriginOf(publicBaseUrl: string | undefined, req: Request): string {
  return originOf(publicBaseUrl) ?? `${req.protocol}://${req.get('host')}`;
}

export function hostedPagesRouter(deps: AppDeps, sources: HostedSources): Router {
  const router = Router();
  const pageOrigin = (req: Request) => pageOriginOf(deps.config.publicBaseUrl, req);
  const assetCache = new Map<string, string>();

  router.get(`${ASSETS_PATH}/:file`, (req, res, next) => {
    const asset = ASSETS[req.params.file];
    if (!asset) return next();
    let body = assetCache.get(req.params.file);
    if (body === undefined) assetCache.set(req.params.file, (body = asset.body()));
    // Short-lived: a deployment changes the script and the page must not run an old one for long.
    res.set({ 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' }).send(body);
  });

  /** The public key the form will send and its organization, when it is an active key. */
  const keyOf = async (req: Request): Promise<{ publicKey: string; organizationId: string } | undefined> => {
    const publicKey = text(req.query.public_key);
    if (!publicKey || publicKey.length > 128) return undefined;
    const organizationId = await sources.organizationOfPublicKey(deps, publicKey);
    return organizationId ? { publicKey, organizationId } : undefined;
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
    // The session is looked up within the key's organization: another organization's key finds nothing.
    const key = ID.test(id) ? await keyOf(req) : undefined;
    const session = key ? await sources.checkoutSession(deps, key.organizationId, id) : undefined;
    const lang = chooseLanguage(req.query.lang, session?.country);
    if (!key || !session) return unavailable(res, lang);
    if (!session.open) return sendNoticePage(res, { status: 410, lang, code: 'CLOSED', text: MESSAGES[lang].errorSession });
    const publicKey = key.publicKey;
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
    // The session is looked up within the key's organization: another organization's key finds nothing.
    const key = ID.test(id) ? await keyOf(req) : undefined;
    const session = key ? await sources.customerSession(deps, key.organizationId, id) : undefined;
    const lang = chooseLanguage(req.query.lang, session?.country);
    if (!key || !session) return unavailable(res, lang);
    if (!session.open) return sendNoticePage(res, { status: 410, lang, code: 'CLOSED', text: MESSAGES[lang].errorSession });
    const publicKey = key.publicKey;
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

  const LINK_NOTICES: Readonly<Record<string, [number, keyof typeof MESSAGES.en]>> = {
    CANCELED: [410, 'linkCanceled'],
    EXPIRED: [410, 'linkExpired'],
    PAID: [410, 'linkPaid'],
    IN_PROCESS: [409, 'linkPaid'],
    NOT_STARTED: [404, 'linkUnavailable'],
    NOT_FOUND: [404, 'linkUnavailable'],
  };

  router.get('/checkout/links/:code', async (req, res) => {
    const code = req.params.code;
    const checkout: LinkCheckout = ID.test(code) ? await sources.openLink(deps, code, pageOrigin(req)) : { ok: false, reason: 'NOT_FOUND' };
    const lang = chooseLanguage(req.query.lang, checkout.ok ? checkout.link.country : checkout.country);
    if (!checkout.ok) {
      const [status, text] = LINK_NOTICES[checkout.reason]!;
      return sendNoticePage(res, { status, lang, code: checkout.reason, text: MESSAGES[lang][text] });
    }
    const { link } = checkout;
    const config: FormConfig = {
      mode: 'link',
      submitUrl: `${API}/checkout/sessions/${encodeURIComponent(checkout.checkoutSessionId)}/token`,
      submitBody: null,
      publicKey: checkout.publicKey,
      parentOrigin: null,
      callbackUrl: originOf(link.callbackUrl) ? link.callbackUrl : null,
      completeUrl: `/checkout/links/${encodeURIComponent(code)}/pay`,
      reference: { payment_link: code, checkout_session: checkout.checkoutSessionId },
    };
    // A link page is a top-level page: nobody may frame it (no clickjacking of the pay button).
    sendFormPage(res, { lang, config, summary: { merchant: link.organizationName, description: link.description, amount: link.amount }, security: {} });
  });

  router.post('/checkout/links/:code/pay', express.json({ limit: '1kb', strict: true }), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const token = text(body.token);
    const session = text(body.checkout_session);
    res.set('Cache-Control', 'no-store');
    // The link page's own script only: a cross-site form or fetch carries another Origin.
    const origin = req.get('origin');
    if (origin !== undefined && origin !== pageOrigin(req)) return res.status(403).json({ code: 'ORIGIN_NOT_ALLOWED' });
    if (!ID.test(req.params.code) || !token || !ID.test(token) || !session || !ID.test(session)) return res.status(400).json({ code: 'INVALID_REQUEST' });
    const outcome = await sources.payLink(deps, req.params.code, session, token);
    if (outcome.kind === 'refused') return res.status(outcome.status).json({ code: outcome.code });
    return res.status(200).json({ paid: outcome.kind === 'paid', status: outcome.paymentStatus });
  });

  return router;
}
