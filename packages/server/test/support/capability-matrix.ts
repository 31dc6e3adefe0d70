/**
 * The capability matrix page (docs/providers/README.md) as GET /v1/providers answers it: one table per
 * provider between two markers. connections.test.ts keeps the page equal to the answer, so it cannot
 * drift; `UPDATE_PROVIDER_DOCS=1` rewrites the part between the markers instead of failing.
 */
import type { Schemas } from '@payorch/types';

export const MATRIX_START = '<!-- capability-matrix:start (generated from GET /v1/providers by packages/server/test/connections.test.ts) -->';
export const MATRIX_END = '<!-- capability-matrix:end -->';

const yes = (b: boolean) => (b ? 'yes' : 'no');
const list = (v: readonly string[] | 'ANY') => (v === 'ANY' ? 'any' : v.length === 0 ? 'none' : v.join(', '));

/** The tables, one section per provider, in the answer's order. */
export function renderCapabilityMatrix(providers: readonly Schemas['Provider'][]): string {
  return providers
    .map((p) => {
      const f = p.features;
      const rows: [string, string][] = [
        ['payment methods', list(p.payment_methods)],
        ['currencies', list(p.currencies)],
        ['countries', list(p.countries)],
        ['authorize now, capture later', yes(f.authorize_capture)],
        ['partial capture', yes(f.partial_capture)],
        ['void (cancel before capture)', yes(f.void)],
        ['partial refund', yes(f.partial_refund)],
        ['multiple refunds', yes(f.multiple_refunds)],
        ['notifications (webhooks from the provider)', yes(f.webhooks)],
        ['dispute evidence forwarded', yes(f.dispute_evidence)],
        ['evidence added after the first batch (PATCH)', yes(f.additional_evidence)],
        ['connection credentials', p.credential_fields.map((c) => `\`${c}\``).join(', ')],
      ];
      return [`### ${p.provider_id} — ${p.display_name}`, '', '| capability | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
    })
    .join('\n\n');
}

/** The page with the part between the markers replaced. */
export function withMatrix(page: string, matrix: string): string {
  const start = page.indexOf(MATRIX_START);
  const end = page.indexOf(MATRIX_END);
  if (start < 0 || end < start) throw new Error('docs/providers/README.md has lost its capability-matrix markers');
  return `${page.slice(0, start + MATRIX_START.length)}\n\n${matrix}\n\n${page.slice(end)}`;
}
