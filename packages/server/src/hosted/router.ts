/**
 * The hosted pages, outside the versioned API (HTML for shoppers, like /docs):
 *
 *   GET  /checkout/sessions/:id            the card form for a checkout session → one-time token
 *   GET  /checkout/customer-sessions/:id   the card form for a customer session → card enrolled
 *   GET  /checkout/links/:code             a payment link: amount, description and the card form (writes nothing)
 *   POST /checkout/links/:code/session     the link page's script, when the shopper submits: a checkout session of the link
 *   POST /checkout/links/:code/pay         the link page's script pays the link with its token
 *   GET  /checkout/assets/{card-form.js, card-form.css, card-rules.js}
 *
 * Query of the form pages: `public_key` (the organization's public key: the only credential the form
 * sends), `parent_origin` (the embedding page's origin, one of the session's allowed origins) and `lang`
 * (en, es, pt). Every page has a strict CSP (origins.ts); the card itself goes from the form's script to
 * the API (`POST /v1/checkout/sessions/{id}/token`, `POST /v1/customers/sessions/{id}/payment-methods`),
 * never through these routes.
 *
 * Anyone may call these routes, so each costs bounded work: every one but the assets is counted per client
 * address before anything is read, then per organization once the organization is known (one key or link
 * lookup), in budgets of their own (ratelimit/public.ts); past a limit, 429 with Retry-After (a notice page
 * for the pages, problem+json for the script's calls). A page visit writes nothing. Once the organization
 * is known its work runs as a request of that organization (inRequestScope, as dispatch.ts does for the
 * API), so the per-organization database bound (db/organization-gate.ts) holds it too: past it, the
 * work waits, then 429 CONCURRENCY_LIMITED.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../context.js';
import { clientAddressKey } from '../ratelimit/auth-failures.js';
import { sendRateLimited } from '../ratelimit/middleware.js';
import type { PublicLimiter } from '../ratelimit/public.js';
import { cardRulesScript } from './card-rules.js';
import { chooseLanguage, MESSAGES, type Language } from './messages.js';
import { chooseParentOrigin, originOf } from './origins.js';
import { ASSETS_PATH, sendFormPage, sendNoticePage, type FormConfig } from './page.js';
import type { HostedSources, LinkView } from './sources.js';
import { ownEntry } from '../platform/own-entry.js';
import { inRequestScope } from '../platform/request-scope.js';

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

export function hostedPagesRouter(deps: AppDeps, sources: HostedSources, limiter: PublicLimiter): Router {
  const router = Router();
  const pageOrigin = (req: Request) => pageOriginOf(deps.config.publicBaseUrl, req);
  const assetCache = new Map<string, string>();

  /** The 429: a notice page in the shopper's language for a page, problem+json for the script's calls. */
  const refuse = (req: Request, res: Response, seconds: number, lang?: Language) => {
    if (req.method !== 'GET') return sendRateLimited(req, res, seconds, 'Too many checkout requests');
    const language = lang ?? chooseLanguage(req.query.lang, undefined);
    res.set('Retry-After', String(seconds));
    return sendNoticePage(res, { status: 429, lang: language, code: 'RATE_LIMITED', text: MESSAGES[language].tooManyRequests });
  };
  /** Counts the request for the organization (sent the 429 and true when it is past its limit). */
  const overOrganizationLimit = async (req: Request, res: Response, organizationId: string): Promise<boolean> => {
    const wait = await limiter.hit({ key: `hosted-org:${organizationId}`, limit: deps.config.hostedRateLimitPerOrganization });
    if (wait > 0) refuse(req, res, wait);
    return wait > 0;
  };

  // Per client address, before any lookup (the assets are constant and cached: not counted).
  router.use(['/checkout/sessions', '/checkout/customer-sessions', '/checkout/links'], async (req, res, next) => {
    try {
      const wait = await limiter.hit({ key: `address:${clientAddressKey(req.ip)}`, limit: deps.config.hostedRateLimitPerAddress });
      return wait > 0 ? refuse(req, res, wait) : next();
    } catch (err) {
      return next(err);
    }
  });

  router.get(`${ASSETS_PATH}/:file`, (req, res, next) => {
    const asset = ownEntry(ASSETS, req.params.file);
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

  /**
   * What both session pages do before their form: find the session within the key's organization
   * (another organization's key finds nothing), count the organization's page views, and refuse an
   * unknown, closed or wrongly framed session. Resolves undefined once a refusal page was sent.
   */
  async function openSession<S extends { open: boolean; country: string | null; allowedOrigins: string[]; callbackUrl: string | null }>(
    req: Request,
    res: Response,
    find: (organizationId: string, id: string) => Promise<S | undefined>,
  ) {
    const id = String(req.params.id);
    const key = ID.test(id) ? await keyOf(req) : undefined;
    if (key && (await overOrganizationLimit(req, res, key.organizationId))) return undefined;
    const session = key ? await inRequestScope(key.organizationId, () => find(key.organizationId, id)) : undefined;
    const lang = chooseLanguage(req.query.lang, session?.country);
    if (!key || !session) return void unavailable(res, lang);
    if (!session.open) return void sendNoticePage(res, { status: 410, lang, code: 'CLOSED', text: MESSAGES[lang].errorSession });
    const frame = framing(req, session);
    if (!frame.ok) return void sendNoticePage(res, { status: 403, lang, code: 'ORIGIN_NOT_ALLOWED', text: MESSAGES[lang].notAllowed });
    return { id, publicKey: key.publicKey, session, lang, parentOrigin: frame.parentOrigin, callbackUrl: originOf(session.callbackUrl) ? session.callbackUrl : null };
  }

  router.get('/checkout/sessions/:id', async (req, res) => {
    const page = await openSession(req, res, (organizationId, id) => sources.checkoutSession(deps, organizationId, id));
    if (!page) return;
    const { id, session, parentOrigin } = page;
    const config: FormConfig = {
      mode: 'payment',
      submitUrl: `${API}/checkout/sessions/${encodeURIComponent(id)}/token`,
      submitBody: null,
      publicKey: page.publicKey,
      parentOrigin,
      callbackUrl: page.callbackUrl,
      completeUrl: null,
      reference: { checkout_session: id },
    };
    sendFormPage(res, {
      lang: page.lang,
      config,
      summary: { merchant: session.organizationName, description: session.description, amount: session.amount },
      security: { frameAncestor: parentOrigin ?? undefined },
    });
  });

  router.get('/checkout/customer-sessions/:id', async (req, res) => {
    const page = await openSession(req, res, (organizationId, id) => sources.customerSession(deps, organizationId, id));
    if (!page) return;
    const { id, session, parentOrigin } = page;
    const config: FormConfig = {
      mode: 'enrollment',
      submitUrl: `${API}/customers/sessions/${encodeURIComponent(id)}/payment-methods`,
      submitBody: { account_id: session.accountId, payment_method_type: 'CARD', country: session.country },
      publicKey: page.publicKey,
      parentOrigin,
      callbackUrl: page.callbackUrl,
      completeUrl: null,
      reference: { customer_session: id },
    };
    sendFormPage(res, { lang: page.lang, config, summary: { merchant: session.organizationName }, security: { frameAncestor: parentOrigin ?? undefined } });
  });

  const LINK_NOTICES: Readonly<Record<string, [number, keyof typeof MESSAGES.en]>> = {
    CANCELED: [410, 'linkCanceled'],
    EXPIRED: [410, 'linkExpired'],
    PAID: [410, 'linkPaid'],
    IN_PROCESS: [409, 'linkPaid'],
    NOT_STARTED: [404, 'linkUnavailable'],
    NOT_FOUND: [404, 'linkUnavailable'],
  };

  /**
   * Whether the link exists, counted for its organization (refused: the 429 was sent). `scoped` runs the
   * link's work as a request of its organization (platform/request-scope.ts, as dispatch.ts does for the
   * API): its database work is held to the organization's bound (db/organization-gate.ts, 429
   * CONCURRENCY_LIMITED past it) and a payment's provider calls are noted.
   */
  const linkOrganization = async (
    req: Request,
    res: Response,
    code: string,
  ): Promise<{ known: boolean; refused: boolean; scoped: <T>(fn: () => Promise<T>) => Promise<T> }> => {
    const organizationId = ID.test(code) ? await sources.linkOrganization(deps, code) : undefined;
    if (!organizationId) return { known: false, refused: false, scoped: (fn) => fn() };
    return { known: true, refused: await overOrganizationLimit(req, res, organizationId), scoped: (fn) => inRequestScope(organizationId, fn) };
  };

  router.get('/checkout/links/:code', async (req, res) => {
    const code = req.params.code;
    const org = await linkOrganization(req, res, code);
    if (org.refused) return;
    const view: LinkView = org.known ? await org.scoped(() => sources.viewLink(deps, code)) : { ok: false, reason: 'NOT_FOUND' };
    const lang = chooseLanguage(req.query.lang, view.ok ? view.link.country : view.country);
    if (!view.ok) {
      const [status, text] = LINK_NOTICES[view.reason]!;
      return sendNoticePage(res, { status, lang, code: view.reason, text: MESSAGES[lang][text] });
    }
    const { link } = view;
    const config: FormConfig = {
      mode: 'link',
      // Known once the shopper submits: sessionUrl makes the link's checkout session then (a visit writes nothing).
      submitUrl: null,
      sessionUrl: `/checkout/links/${encodeURIComponent(code)}/session`,
      submitBody: null,
      publicKey: view.publicKey,
      parentOrigin: null,
      callbackUrl: originOf(link.callbackUrl) ? link.callbackUrl : null,
      completeUrl: `/checkout/links/${encodeURIComponent(code)}/pay`,
      reference: { payment_link: code },
    };
    // A link page is a top-level page: nobody may frame it (no clickjacking of the pay button).
    sendFormPage(res, { lang, config, summary: { merchant: link.organizationName, description: link.description, amount: link.amount }, security: {} });
  });

  /** The link page's own script only: a cross-site form or fetch carries another Origin. */
  const fromLinkPage = (req: Request) => {
    const origin = req.get('origin');
    return origin === undefined || origin === pageOrigin(req);
  };

  router.post('/checkout/links/:code/session', async (req, res) => {
    res.set('Cache-Control', 'no-store');
    if (!fromLinkPage(req)) return res.status(403).json({ code: 'ORIGIN_NOT_ALLOWED' });
    const code = req.params.code;
    const org = await linkOrganization(req, res, code);
    if (org.refused) return;
    if (!org.known) return res.status(404).json({ code: 'NOT_FOUND' });
    const opened = await org.scoped(() => sources.openLink(deps, code, pageOrigin(req)));
    if (!opened.ok) return res.status(LINK_NOTICES[opened.reason]![0]).json({ code: opened.reason });
    const id = opened.checkoutSessionId;
    return res.status(201).json({ checkout_session: id, submit_url: `${API}/checkout/sessions/${encodeURIComponent(id)}/token` });
  });

  router.post('/checkout/links/:code/pay', express.json({ limit: '1kb', strict: true }), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const token = text(body.token);
    const session = text(body.checkout_session);
    res.set('Cache-Control', 'no-store');
    if (!fromLinkPage(req)) return res.status(403).json({ code: 'ORIGIN_NOT_ALLOWED' });
    if (!ID.test(req.params.code) || !token || !ID.test(token) || !session || !ID.test(session)) return res.status(400).json({ code: 'INVALID_REQUEST' });
    const org = await linkOrganization(req, res, req.params.code);
    if (org.refused) return;
    if (!org.known) return res.status(404).json({ code: 'PAYMENT_LINK_NOT_FOUND' });
    const outcome = await org.scoped(() => sources.payLink(deps, req.params.code, session, token));
    if (outcome.kind === 'refused') return res.status(outcome.status).json({ code: outcome.code });
    return res.status(200).json({ paid: outcome.kind === 'paid', status: outcome.paymentStatus });
  });

  return router;
}
