/**
 * A PIX "copia e cola" code (BR Code, an EMV merchant-presented QR payload) as a provider's double hands it
 * out: payload format 01, the PIX domain with the double's key, the amount, BRL (986), country BR, the
 * merchant and city, the reference (alphanumerics, at most 25), and the CRC16-CCITT of everything before it.
 */
export function pixCode(input: { amountMinor: number; reference: string; key: string; merchantName: string }): string {
  const field = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;
  const body =
    field('00', '01') +
    field('26', field('00', 'br.gov.bcb.pix') + field('01', input.key)) +
    field('52', '0000') +
    field('53', '986') +
    field('54', (input.amountMinor / 100).toFixed(2)) +
    field('58', 'BR') +
    field('59', input.merchantName) +
    field('60', 'SAO PAULO') +
    field('62', field('05', input.reference.replace(/[^A-Za-z0-9]/g, '').slice(0, 25))) +
    '6304';
  let crc = 0xffff;
  for (const byte of Buffer.from(body, 'ascii')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return body + crc.toString(16).toUpperCase().padStart(4, '0');
}
