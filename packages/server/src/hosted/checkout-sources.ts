/**
 * The hosted pages' view of the checkout domain (src/checkout: sessions, customer sessions, payment links)
 * and of tenancy: the HostedSources the router reads through.
 */
import type { AppDeps } from '../context.js';
import { linkPage, openLinkCheckout, payLink } from '../checkout/payment-links.js';
import { checkoutRepository } from '../checkout/repository.js';
import { sessionStatus } from '../checkout/sessions.js';
import { linkBase } from '../platform/config.js';
import { tenancyRepository } from '../tenancy/repository.js';
import type { HostedSources } from './sources.js';

const organizationName = async (deps: AppDeps, id: string) => (await tenancyRepository.findOrganization(deps.db, id))?.name ?? null;

/** What both session pages show of their session (checkout or customer session alike). */
async function sessionPageOf(
  deps: AppDeps,
  organizationId: string,
  row: { id: string; account_id: string; country: string; callback_url: string | null; allowed_origins: string[] },
) {
  return {
    id: row.id,
    organizationName: await organizationName(deps, organizationId),
    accountId: row.account_id,
    country: row.country,
    callbackUrl: row.callback_url,
    allowedOrigins: row.allowed_origins,
  };
}

export const checkoutSources: HostedSources = {
  async organizationOfPublicKey(deps, publicKey) {
    return (await deps.services.credentials.findActiveApiKey(deps.db, publicKey))?.organization_id;
  },

  async checkoutSession(deps, organizationId, id) {
    const row = await checkoutRepository.findSession(deps.db, organizationId, id);
    // A payment link's sessions are paid on the link's own page, not in a merchant's form.
    if (!row || row.payment_link_code !== null) return undefined;
    return {
      ...(await sessionPageOf(deps, organizationId, row)),
      open: sessionStatus(row) === 'OPEN',
      amount: { value: Number(row.amount_value), currency: row.currency },
      description: row.payment_description,
    };
  },

  async customerSession(deps, organizationId, id) {
    const row = await checkoutRepository.findCustomerSession(deps.db, organizationId, id);
    if (!row) return undefined;
    return { ...(await sessionPageOf(deps, organizationId, row)), open: !row.expired };
  },

  async linkOrganization(deps, code) {
    return checkoutRepository.linkOrganization(deps.db, code);
  },

  async viewLink(deps, code) {
    const page = await linkPage(deps.db, code);
    if (!page.ok) return { ok: false, reason: page.reason, ...(page.link ? { country: page.link.country } : {}) };
    const { link } = page;
    return {
      ok: true,
      publicKey: page.publicApiKey,
      link: {
        code: link.code,
        organizationName: page.merchantName,
        country: link.country,
        amount: link.amount,
        description: link.description,
        callbackUrl: link.callback_url,
      },
    };
  },

  async openLink(deps, code, pageOrigin) {
    const opened = await openLinkCheckout(deps.db, code, pageOrigin);
    return opened.ok ? { ok: true, checkoutSessionId: opened.session.checkout_session } : { ok: false, reason: opened.reason };
  },

  async payLink(deps, code, checkoutSession, token) {
    const outcome = await payLink(deps, code, { checkoutSession, token }, { baseUrl: linkBase(deps.config), log: deps.log });
    if (!outcome.ok) return { kind: 'refused', status: outcome.problem.status, code: outcome.problem.body.code };
    const status = outcome.payment.status;
    // SUCCEEDED also for an authorization (capture: false); PENDING is told as such by the page.
    return { kind: status === 'SUCCEEDED' ? 'paid' : 'declined', paymentStatus: status };
  },
};
