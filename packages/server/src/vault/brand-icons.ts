/**
 * Brand images for the `icon` field of enrolled methods: GET /v1/assets/brands/{brand}.svg. Plain
 * labelled badges drawn here (no third-party artwork), served with a long cache lifetime and a
 * cross-origin resource policy that lets a merchant's checkout page show them.
 */
import { Router } from 'express';
import { API_BASE_PATH } from '../http/spec.js';
import { ownEntry } from '../platform/own-entry.js';

const BADGES: Readonly<Record<string, { label: string; background: string; color: string }>> = {
  visa: { label: 'VISA', background: '#1a1f71', color: '#ffffff' },
  mastercard: { label: 'Mastercard', background: '#252525', color: '#f79e1b' },
  amex: { label: 'AMEX', background: '#2e77bc', color: '#ffffff' },
  discover: { label: 'DISCOVER', background: '#ffffff', color: '#e55c20' },
  diners: { label: 'Diners', background: '#0079be', color: '#ffffff' },
  jcb: { label: 'JCB', background: '#0b4ea2', color: '#ffffff' },
  elo: { label: 'elo', background: '#000000', color: '#ffcb05' },
  hipercard: { label: 'Hipercard', background: '#b3131b', color: '#ffffff' },
  hiper: { label: 'Hiper', background: '#f37021', color: '#ffffff' },
  maestro: { label: 'Maestro', background: '#0099df', color: '#ffffff' },
  unionpay: { label: 'UnionPay', background: '#d10429', color: '#ffffff' },
  mir: { label: 'MIR', background: '#0f754e', color: '#ffffff' },
  troy: { label: 'troy', background: '#00a3ad', color: '#ffffff' },
  naranja: { label: 'Naranja', background: '#fe5000', color: '#ffffff' },
  verve: { label: 'Verve', background: '#00425f', color: '#ffffff' },
  card: { label: 'CARD', background: '#5f6b7a', color: '#ffffff' },
  ach: { label: 'ACH', background: '#2f4858', color: '#ffffff' },
  wallet: { label: 'WALLET', background: '#3c2f58', color: '#ffffff' },
};

export function iconSlugFor(type: string, brand: string | null): string {
  if (brand) return ownEntry(BADGES, brand.toLowerCase()) ? brand.toLowerCase() : 'card';
  if (type === 'ACH_ENROLLMENT') return 'ach';
  if (type === 'WALLET_PAY_ENROLLMENT') return 'wallet';
  return 'card';
}

export function brandIconUrl(baseUrl: string, slug: string): string {
  return `${baseUrl}${API_BASE_PATH}/assets/brands/${slug}.svg`;
}

export function brandSvg(slug: string): string | undefined {
  const badge = ownEntry(BADGES, slug);
  if (!badge) return undefined;
  const size = badge.label.length > 7 ? 11 : badge.label.length > 4 ? 13 : 16;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="40" viewBox="0 0 64 40" role="img" aria-label="${badge.label}">
<rect x="0.5" y="0.5" width="63" height="39" rx="5" fill="${badge.background}" stroke="#d0d4da"/>
<text x="32" y="25" text-anchor="middle" font-family="Helvetica, Arial, sans-serif" font-weight="700" font-size="${size}" fill="${badge.color}">${badge.label}</text>
</svg>
`;
}

export function brandIconsRouter(): Router {
  const router = Router();
  router.get(`${API_BASE_PATH}/assets/brands/:file`, (req, res, next) => {
    const match = /^([a-z]+)\.svg$/.exec(req.params.file);
    const svg = match ? brandSvg(match[1]!) : undefined;
    if (!svg) return next();
    res
      .status(200)
      .set({
        'Content-Type': 'image/svg+xml; charset=utf-8',
        'Cache-Control': 'public, max-age=86400, immutable',
        'Cross-Origin-Resource-Policy': 'cross-origin',
        // An SVG opened directly must not run anything.
        'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
      })
      .send(svg);
  });
  return router;
}
