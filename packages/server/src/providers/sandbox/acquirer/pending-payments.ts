/**
 * What both sandbox acquirers do with asynchronous payment methods, whatever their wire protocol: issue a
 * payment request (a ledger line of kind PURCHASE, status PENDING, with a deadline) and the action the
 * shopper takes, then end it on demand (the sandbox's "the shopper paid / the bank refused / it expired /
 * the shopper cancelled"). Each acquirer wraps these in its own paths and field names (acquirer-a/server.ts,
 * acquirer-b/server.ts). A paid request is an approval like a card purchase: it can be refunded through
 * the acquirer's usual refund operation.
 */
import { randomInt } from 'node:crypto';
import { sandboxId } from '../ids.js';
import type { Ledger, LedgerStatus, PendingOutcome, Recorded } from './ledger.js';

export const PENDING_METHODS = ['PIX', 'BANK_TRANSFER', 'OXXO', 'BOLETO', 'CASH', 'PAYPAL', 'MERCADO_PAGO_WALLET', 'APPLE_PAY'] as const;
export type PendingMethod = (typeof PENDING_METHODS)[number];

/** How long each kind of action stays payable: a PIX QR code half an hour, a wallet's page an hour, a transfer or a voucher three days. */
export const ACTION_LIFETIME_MS: Readonly<Record<PendingMethod, number>> = {
  PIX: 30 * 60_000,
  BANK_TRANSFER: 3 * 86_400_000,
  OXXO: 3 * 86_400_000,
  BOLETO: 3 * 86_400_000,
  CASH: 3 * 86_400_000,
  PAYPAL: 60 * 60_000,
  MERCADO_PAGO_WALLET: 60 * 60_000,
  APPLE_PAY: 60 * 60_000,
};

/**
 * A token wallet (GOOGLE_PAY) is not a payment request: the acquirer authorizes the token at once, as the
 * test card `450799000000` + the card's last four (docs/guides/test-cards.md): `…0010` insufficient funds,
 * `…0028` declined by the bank, `…0077` a provider error, any other last four (`1515`) approved. The token
 * itself is opaque to the sandbox and never written to its ledger.
 */
export const TOKEN_WALLET_METHODS = ['GOOGLE_PAY'] as const;
export const isTokenWallet = (v: unknown): v is (typeof TOKEN_WALLET_METHODS)[number] => typeof v === 'string' && (TOKEN_WALLET_METHODS as readonly string[]).includes(v);
export const tokenTestCard = (lastFour: string): string => `450799000000${lastFour}`;
export const isLastFour = (v: unknown): v is string => typeof v === 'string' && /^[0-9]{4}$/.test(v);
export const isWalletToken = (v: unknown): v is string => typeof v === 'string' && v.length >= 1 && v.length <= 8192;

/**
 * The cash voucher (CASH) of the payment's country: the local network's (OXXO in Mexico, a boleto in
 * Brazil, Efecty in Colombia, PagoEfectivo in Peru, Pago Fácil in Argentina), else a generic cash voucher
 * payable at the sandbox's partner stores.
 */
const CASH_NETWORK: Readonly<Record<string, string>> = { MX: 'OXXO', BR: 'BOLETO', CO: 'EFECTY', PE: 'PAGOEFECTIVO', AR: 'PAGOFACIL' };
export const cashVoucherType = (country: string | null | undefined): string => CASH_NETWORK[country ?? ''] ?? 'CASH';

export const isPendingMethod = (v: unknown): v is PendingMethod => typeof v === 'string' && (PENDING_METHODS as readonly string[]).includes(v);

/** The action of a payment request, in neutral terms (each acquirer names the fields its own way). */
export type IssuedAction =
  | { kind: 'QR_CODE'; qr_code: string }
  | { kind: 'BANK_TRANSFER'; bank_name: string; beneficiary_name: string; bank_account: string; account_type: string; reference: string }
  | { kind: 'VOUCHER'; voucher_type: string; reference: string; barcode: string; barcode_format: string; due_date: string; instruction: string }
  | { kind: 'REDIRECT' };

/**
 * `n` random digits after a fixed prefix. References start with 0, which no card brand does, so a
 * reference of a card number's length is never taken for one (the redaction of provider text, the tests'
 * PAN scan).
 */
const digits = (n: number, prefix = '0') => prefix + Array.from({ length: n - prefix.length }, () => randomInt(0, 10)).join('');

/** CRC-16/CCITT-FALSE, the checksum that closes a PIX BR Code (EMV merchant-presented QR). */
function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

const emv = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;

/** A PIX "copia e cola" payload in the BR Code layout (dynamic key, amount, transaction id, CRC). */
export function pixPayload(major: string, txid: string): string {
  // Two decimals, as the BR Code writes amounts (exact decimal text, never a float).
  const [whole, fraction = ''] = major.split('.');
  const amount = `${whole}.${fraction.padEnd(2, '0').slice(0, 2)}`;
  const account = emv('00', 'br.gov.bcb.pix') + emv('01', `sandbox-${txid.slice(0, 12)}@payorch.test`);
  const body =
    emv('00', '01') +
    emv('26', account) +
    emv('52', '0000') +
    emv('53', '986') +
    emv('54', amount) +
    emv('58', 'BR') +
    emv('59', 'PAYORCH SANDBOX') +
    emv('60', 'SAO PAULO') +
    emv('62', emv('05', txid.slice(0, 25))) +
    '6304';
  return body + crc16(body);
}

function actionOf(method: PendingMethod, amount: string, id: string, expiresAt: Date, country: string | null): IssuedAction {
  switch (method) {
    case 'CASH': {
      const network = cashVoucherType(country);
      if (network === 'OXXO' || network === 'BOLETO') return actionOf(network, amount, id, expiresAt, country);
      return {
        kind: 'VOUCHER',
        voucher_type: network,
        reference: digits(16),
        barcode: digits(24),
        barcode_format: 'CODE128',
        due_date: expiresAt.toISOString().slice(0, 10),
        instruction:
          network === 'CASH'
            ? 'Pay in cash at any partner store: show the barcode or give the reference to the cashier.'
            : `Pay in cash at any ${network} point: show the barcode or give the reference to the cashier.`,
      };
    }
    case 'PIX':
      return { kind: 'QR_CODE', qr_code: pixPayload(amount, id.replace(/[^A-Za-z0-9]/g, '')) };
    case 'BANK_TRANSFER':
      return { kind: 'BANK_TRANSFER', bank_name: 'Sandbox Bank', beneficiary_name: 'Payorch Sandbox Merchant', bank_account: digits(12), account_type: 'CHECKING', reference: `TRF${digits(10)}` };
    case 'OXXO':
      return {
        kind: 'VOUCHER',
        voucher_type: 'OXXO',
        reference: digits(14),
        barcode: digits(30),
        barcode_format: 'CODE128',
        due_date: expiresAt.toISOString().slice(0, 10),
        instruction: 'Pay in cash at any OXXO store: show the barcode or give the reference to the cashier.',
      };
    case 'BOLETO':
      return {
        kind: 'VOUCHER',
        voucher_type: 'BOLETO',
        reference: digits(47),
        barcode: digits(44, '0019'),
        barcode_format: 'ITF',
        due_date: expiresAt.toISOString().slice(0, 10),
        instruction: 'Pay at any bank, lottery house or in your bank app with the barcode or the typeable line.',
      };
    case 'PAYPAL':
    case 'MERCADO_PAGO_WALLET':
    case 'APPLE_PAY':
      return { kind: 'REDIRECT' };
  }
}

export interface PaymentRequest {
  reference: string;
  paymentId: string | null;
  method: PendingMethod;
  /** Decimal text as the ledger records it (A: major units; B: minor units). */
  ledgerAmount: string;
  /** Major units, for the PIX payload. */
  majorAmount: string;
  currency: string;
  /** The payment's country (ISO 3166-1 alpha-2): which voucher a CASH payment gets. */
  country?: string | null;
}

/**
 * Issues a payment request: the body `present` makes of it is recorded (PENDING, its deadline) under the
 * caller's reference, or the first answer comes back for a repeated reference (`earlier`).
 */
export async function issuePaymentRequest(
  ledger: Ledger,
  r: PaymentRequest,
  present: (issued: { id: string; action: IssuedAction; expiresAt: string }) => Record<string, unknown>,
): Promise<{ body: Record<string, unknown>; earlier?: Awaited<ReturnType<Ledger['record']>> }> {
  const id = sandboxId('pay');
  const expires = new Date(Date.now() + ACTION_LIFETIME_MS[r.method]);
  const body = present({ id, action: actionOf(r.method, r.majorAmount, id, expires, r.country ?? null), expiresAt: expires.toISOString() });
  const line: Recorded = {
    entry: {
      reference: r.reference,
      payment_id: r.paymentId,
      kind: 'PURCHASE',
      status: 'PENDING',
      amount: { value: r.ledgerAmount, currency: r.currency },
      id,
      target_id: null,
      created_at: new Date().toISOString(),
    },
    httpStatus: 200,
    body,
    held: false,
    expiresAt: expires.toISOString(),
  };
  const earlier = await ledger.record(line);
  return earlier ? { body, earlier } : { body };
}

export const SIMULATED_OUTCOMES: Readonly<Record<string, PendingOutcome>> = { PAY: 'APPROVED', DECLINE: 'DECLINED', EXPIRE: 'EXPIRED', CANCEL: 'CANCELED' };

/** Ends a payment request as the sandbox is told to; the request's status after, or undefined when the acquirer has no such request. */
export async function settlePaymentRequest(ledger: Ledger, id: string, outcome: PendingOutcome): Promise<{ status: LedgerStatus; paymentId: string | null } | undefined> {
  const settled = await ledger.settlePending(id, outcome);
  if (settled === 'NO_TARGET' || settled.entry.kind !== 'PURCHASE') return undefined;
  return { status: settled.status, paymentId: settled.entry.payment_id };
}
