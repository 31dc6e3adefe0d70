/**
 * @payorch/client/checkout — the browser side of the hosted card form, for merchants outside PCI scope.
 *
 *   // mountCardForm, from the '@payorch/client/checkout' entry
 *   const { token } = await mountCardForm(document.querySelector('#card')!, {
 *     origin: 'https://pay.example.com', sessionId, publicKey: 'pk_…', lang: 'pt',
 *   });
 *   // send `token` to your server, which pays with payment_method.token
 *
 * The form runs in an iframe on payorch's origin: this page never sees the card number. The result comes
 * back by postMessage and is accepted only from that frame's window and payorch's origin. No Node
 * built-in, no dependency: a few hundred bytes for the merchant's bundle.
 */

export type CardFormLanguage = 'en' | 'es' | 'pt';

export interface MountCardFormOptions {
  /** Where payorch serves the form: its public origin, e.g. `https://pay.example.com` (no path). */
  origin: string;
  /** The checkout session (`POST /v1/checkout/sessions`) the card pays: a one-time token for it. */
  sessionId?: string;
  /** Or a customer session (`POST /v1/customers/sessions`): the card is enrolled for its customer. */
  customerSessionId?: string;
  /** The organization's public API key (never the secret key: this runs in the shopper's browser). */
  publicKey: string;
  /** Form language; by default the session's country decides (pt for BR, es for Spanish-speaking ones). */
  lang?: CardFormLanguage;
  /** The iframe's accessible name. */
  title?: string;
  /** Aborting removes the form and rejects the promise. */
  signal?: AbortSignal;
}

/** What may be shown to the shopper: brand and last four digits. */
export interface CardFormCard {
  brand: string;
  lfd: string;
}

/** A checkout session's result: pay with `payment_method.token` from your server. */
export interface CardFormResult {
  /** The one-time token (single use, minutes long, bound to the session's amount). */
  token: string;
  card: CardFormCard;
  checkout_session: string;
}

/** A customer session's result: the card is enrolled for the session's customer. */
export interface CardFormEnrollment {
  vaulted_token: string;
  card: CardFormCard;
  customer_session: string;
}

/** The address of the form for these options, as framed by a page of `parentOrigin`. */
export function cardFormUrl(options: Pick<MountCardFormOptions, 'origin' | 'sessionId' | 'customerSessionId' | 'publicKey' | 'lang'>, parentOrigin: string): string {
  const base = new URL(options.origin);
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new TypeError(`origin must be an http(s) origin, got ${options.origin}`);
  if (Boolean(options.sessionId) === Boolean(options.customerSessionId)) throw new TypeError('give exactly one of sessionId and customerSessionId');
  const path = options.sessionId
    ? `/checkout/sessions/${encodeURIComponent(options.sessionId)}`
    : `/checkout/customer-sessions/${encodeURIComponent(options.customerSessionId!)}`;
  const url = new URL(path, base.origin);
  url.searchParams.set('public_key', options.publicKey);
  url.searchParams.set('parent_origin', parentOrigin);
  if (options.lang) url.searchParams.set('lang', options.lang);
  return url.toString();
}

/**
 * True for the form's answer: from the frame's own window, from payorch's origin, well formed (a token
 * message for a checkout session, an enrollment message for a customer session).
 */
export function isCardFormResult(
  event: Pick<MessageEvent, 'origin' | 'source' | 'data'>,
  formOrigin: string,
  frame: unknown,
): event is MessageEvent<((CardFormResult & { type: 'payorch:token' }) | (CardFormEnrollment & { type: 'payorch:enrolled' }))> {
  if (event.origin !== formOrigin || event.source !== frame) return false;
  const data = event.data as { type?: unknown; token?: unknown; vaulted_token?: unknown } | null;
  if (typeof data !== 'object' || data === null) return false;
  return (data.type === 'payorch:token' && typeof data.token === 'string') || (data.type === 'payorch:enrolled' && typeof data.vaulted_token === 'string');
}

/**
 * Puts the hosted form inside `container` and resolves once the shopper has filled it in (the form checks
 * the card first): with the one-time token for a checkout session, with the enrolled card's vaulted_token
 * for a customer session. The iframe stays mounted so it shows its outcome; remove it with
 * `container.replaceChildren()` or the abort signal.
 */
export function mountCardForm(container: HTMLElement, options: MountCardFormOptions & { sessionId: string; customerSessionId?: undefined }): Promise<CardFormResult>;
export function mountCardForm(container: HTMLElement, options: MountCardFormOptions & { customerSessionId: string; sessionId?: undefined }): Promise<CardFormEnrollment>;
export function mountCardForm(container: HTMLElement, options: MountCardFormOptions): Promise<CardFormResult | CardFormEnrollment> {
  const doc = container.ownerDocument;
  const win = doc.defaultView;
  if (!win) return Promise.reject(new TypeError('the container is not in a window'));
  const formOrigin = new URL(options.origin).origin;
  const iframe = doc.createElement('iframe');
  iframe.src = cardFormUrl(options, win.location.origin);
  iframe.title = options.title ?? 'Card form';
  iframe.setAttribute('referrerpolicy', 'no-referrer');
  iframe.style.border = '0';
  iframe.style.width = '100%';
  iframe.style.minHeight = '26rem';

  return new Promise<CardFormResult | CardFormEnrollment>((resolve, reject) => {
    const stop = () => {
      win.removeEventListener('message', onMessage);
      options.signal?.removeEventListener('abort', onAbort);
    };
    function onMessage(event: MessageEvent) {
      if (!isCardFormResult(event, formOrigin, iframe.contentWindow)) return;
      stop();
      const { type: _type, ...result } = event.data;
      resolve(result as CardFormResult | CardFormEnrollment);
    }
    function onAbort() {
      stop();
      iframe.remove();
      reject(options.signal?.reason ?? new Error('aborted'));
    }
    if (options.signal?.aborted) return onAbort();
    win.addEventListener('message', onMessage);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    container.appendChild(iframe);
  });
}
