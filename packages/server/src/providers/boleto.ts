/** Boleto arithmetic shared by the connectors that issue boletos (Stripe, Adyen). */

/**
 * The 44-digit barcode of a boleto from its 47-digit typed line (linha digitável: Stripe's boleto `number`,
 * Adyen's voucher `reference`): the bank and currency, the check digit, the due factor and value, then the free field
 * the typed line splits in three blocks without their own check digits. Null for any other shape.
 */
export function boletoBarcode(typedLine: string): string | null {
  const d = typedLine.replace(/\D/g, '');
  if (d.length !== 47) return null;
  return `${d.slice(0, 4)}${d[32]}${d.slice(33, 47)}${d.slice(4, 9)}${d.slice(10, 20)}${d.slice(21, 31)}`;
}
