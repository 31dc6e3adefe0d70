/**
 * Which page may hold the hosted form, and the headers that enforce it. The form is framed by exactly one
 * origin per page load: the `parent_origin` the merchant's page asks for, accepted only when it is one of
 * the session's allowed origins (or, with none given, the session's only allowed origin). That origin is
 * both the CSP `frame-ancestors` (the browser refuses to render the form inside any other page) and the
 * only `postMessage` target the form's script uses (a token never reaches another window).
 */
import type { Response } from 'express';

/** "https://shop.example:8443/path" → "https://shop.example:8443"; undefined for anything but http(s). */
export function originOf(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/**
 * The origin the form answers: the requested one when the session allows it; the session's only allowed
 * origin when none was requested; otherwise undefined (the page refuses to show the form).
 */
export function chooseParentOrigin(requested: unknown, allowed: readonly string[]): string | undefined {
  const normalized = allowed.map(originOf).filter((o): o is string => o !== undefined);
  if (typeof requested === 'string' && requested !== '') {
    const origin = originOf(requested);
    return origin !== undefined && origin === requested.replace(/\/$/, '') && normalized.includes(origin) ? origin : undefined;
  }
  return normalized.length === 1 ? normalized[0] : undefined;
}

export interface PageSecurity {
  /** The one origin allowed to frame the page, or none (the page is a top-level page only). */
  frameAncestor?: string | undefined;
  /** Where a form post may go besides this origin (a redirect mode callback). */
  formTarget?: string | undefined;
}

/**
 * Headers for a hosted page: scripts, styles, images and requests from payorch's own origin only (no
 * inline script, no third party), and framing limited to `frameAncestor`.
 */
export function setPageHeaders(res: Response, security: PageSecurity): void {
  const formAction = ["'self'", ...(security.formTarget ? [security.formTarget] : [])].join(' ');
  res.removeHeader('X-Frame-Options'); // helmet's SAMEORIGIN: frame-ancestors says who may frame the form
  res.set({
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'Content-Security-Policy': [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self'",
      "connect-src 'self'",
      `form-action ${formAction}`,
      `frame-ancestors ${security.frameAncestor ?? "'none'"}`,
      "base-uri 'none'",
    ].join('; '),
  });
}
