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
  organizationId: string;
  organizationName: string;
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
  organizationId: string;
  organizationName: string;
  country: string;
  amount: HostedAmount;
  description: string | null;
  status: 'ACTIVE' | 'PAID' | 'CANCELED' | 'EXPIRED';
}

/** A link page's checkout: the session the shopper's card is tokenized for, and the key the form sends. */
export interface LinkCheckout {
  checkoutSessionId: string;
  publicKey: string;
}

export type LinkPayment =
  | { kind: 'paid'; paymentStatus: string }
  | { kind: 'declined'; paymentStatus: string }
  | { kind: 'unavailable'; status: HostedPaymentLink['status'] | 'NOT_FOUND' }
  | { kind: 'invalid-token'; message: string };

export interface HostedSources {
  checkoutSession(deps: AppDeps, id: string): Promise<HostedCheckoutSession | undefined>;
  customerSession(deps: AppDeps, id: string): Promise<HostedCustomerSession | undefined>;
  paymentLink(deps: AppDeps, code: string): Promise<HostedPaymentLink | undefined>;
  /** The session a link page's form tokenizes for (made for the link when first needed). */
  linkCheckout(deps: AppDeps, link: HostedPaymentLink): Promise<LinkCheckout>;
  /** Pays an ACTIVE link with a one-time token made for its session. */
  payLink(deps: AppDeps, code: string, token: string): Promise<LinkPayment>;
  /** The organization of an active public key (the form's `public_key` must be the session's). */
  organizationOfPublicKey(deps: AppDeps, publicKey: string): Promise<string | undefined>;
}
