/**
 * What the hosted pages read about a checkout session, a customer session and a payment link, and the one
 * thing they do besides rendering (pay a link with a one-time token). The records belong to their domains;
 * this is the narrow view the pages need, so the pages never import those domains' tables.
 */
import type { AppDeps } from '../context.js';

export interface HostedAmount {
  value: number;
  currency: string;
}

interface HostedBase {
  organizationName: string | null;
  accountId: string;
  country: string;
  callbackUrl: string | null;
  /** Origins whose pages may embed the form and receive its result (the session's `allowed_origins`). */
  allowedOrigins: string[];
  /** Still takes a card (not paid, not expired). */
  open: boolean;
}

export interface HostedCheckoutSession extends HostedBase {
  id: string;
  amount: HostedAmount | null;
  description: string | null;
}

export interface HostedCustomerSession extends HostedBase {
  id: string;
}

export interface HostedPaymentLink {
  code: string;
  organizationName: string | null;
  country: string;
  amount: HostedAmount;
  description: string | null;
  callbackUrl: string | null;
}

/** Why a link's page takes no card now. */
export type LinkRefusal = 'NOT_FOUND' | 'CANCELED' | 'EXPIRED' | 'PAID' | 'NOT_STARTED' | 'IN_PROCESS';

/** A link page's visit: the link and the organization's public key the form tokenizes with (nothing is written). */
export type LinkView = { ok: true; link: HostedPaymentLink; publicKey: string } | { ok: false; reason: LinkRefusal; country?: string };

/** A checkout session of the link, made when the shopper submits a card (its tokens are bound to the link's amount). */
export type LinkCheckout = { ok: true; checkoutSessionId: string } | { ok: false; reason: LinkRefusal };

export type LinkPayment =
  | { kind: 'paid'; paymentStatus: string }
  | { kind: 'declined'; paymentStatus: string }
  | { kind: 'refused'; status: number; code: string };

export interface HostedSources {
  /** A checkout session of the organization (the form's public key names it). */
  checkoutSession(deps: AppDeps, organizationId: string, id: string): Promise<HostedCheckoutSession | undefined>;
  customerSession(deps: AppDeps, organizationId: string, id: string): Promise<HostedCustomerSession | undefined>;
  /** The organization of a link (one cheap read: the page's per-organization limit is checked before anything else). */
  linkOrganization(deps: AppDeps, code: string): Promise<string | undefined>;
  /** What the link's page shows, or why it takes no card (reads only). */
  viewLink(deps: AppDeps, code: string): Promise<LinkView>;
  /** A checkout session of the link for a shopper who submits a card on its page (on `pageOrigin`), or why not. */
  openLink(deps: AppDeps, code: string, pageOrigin: string): Promise<LinkCheckout>;
  /** Pays the link with a one-time token of one of its checkout sessions. */
  payLink(deps: AppDeps, code: string, checkoutSession: string, token: string): Promise<LinkPayment>;
  /** The organization of an active public key (the form's `public_key`). */
  organizationOfPublicKey(deps: AppDeps, publicKey: string): Promise<string | undefined>;
}
