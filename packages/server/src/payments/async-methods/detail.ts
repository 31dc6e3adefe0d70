/**
 * The payment method of an asynchronous payment in Yuno's shape: the action the shopper takes is under
 * `payment_method.payment_method_detail` — `bank_transfer` (PIX: `qr_code`, and `redirect_url` when the
 * provider hosts a page showing it; a transfer: the account and its `reference`), `ticket` (a voucher:
 * `provider_number`, `provider_barcode`, `date_of_expiration`, `redirect_url` to the provider's printable voucher),
 * `wallet` (`redirect_url`) — each with `expires_at`. A token wallet (GOOGLE_PAY) has `wallet` with both null.
 */
import type { Schemas } from '@payorch/types';
import type { AsyncMethodType, ShopperAction } from '../../providers/provider.js';

type Detail = Schemas['PaymentMethodDetail'];

const NO_DETAIL: Detail = { card: null, bank_transfer: null, ticket: null, wallet: null };

function detailOf(action: ShopperAction | null): Detail {
  if (!action) return NO_DETAIL;
  switch (action.kind) {
    case 'QR_CODE':
    case 'BANK_TRANSFER': {
      const transfer = action.kind === 'BANK_TRANSFER' ? action : null;
      return {
        ...NO_DETAIL,
        bank_transfer: {
          provider_image: null,
          account_type: transfer?.accountType || null,
          bank_name: transfer?.bankName || null,
          beneficiary_name: transfer?.beneficiaryName || null,
          bank_account: transfer?.bankAccount || null,
          bank_account_2: null,
          beneficiary_document_type: null,
          beneficiary_document: null,
          payment_instruction: action.kind === 'QR_CODE' ? 'Scan the QR code, or paste the code, in your bank app to pay with PIX.' : 'Transfer the amount to this account, quoting the reference.',
          redirect_url: action.kind === 'QR_CODE' ? (action.pageUrl ?? null) : null,
          reference: transfer?.reference || null,
          qr_code: action.kind === 'QR_CODE' ? action.qrCode : null,
          expires_at: action.expiresAt,
        },
      };
    }
    case 'VOUCHER':
      return {
        ...NO_DETAIL,
        ticket: {
          type: action.voucherType || null,
          benefit_type: null,
          date_of_expiration: action.dueDate,
          payment_instruction: action.instruction || null,
          provider_number: action.reference || null,
          provider_barcode: action.barcode || null,
          provider_logo: null,
          provider_format: action.barcodeFormat || null,
          redirect_url: action.pageUrl ?? null,
          expires_at: action.expiresAt,
        },
      };
    case 'REDIRECT':
      return { ...NO_DETAIL, wallet: { redirect_url: action.redirectUrl, expires_at: action.expiresAt } };
  }
}

/** The payment's method: its type and, once the provider issued it, the shopper's action. */
export function asyncPaymentMethod(type: AsyncMethodType, action: ShopperAction | null): Schemas['PaymentMethod'] {
  // A token wallet (GOOGLE_PAY) has no action: its `wallet` says so (no page, no deadline).
  const detail = type === 'GOOGLE_PAY' && !action ? { ...NO_DETAIL, wallet: { redirect_url: null, expires_at: null } } : detailOf(action);
  return { vaulted_token: null, type, vault_on_success: false, token: null, parent_payment_method_type: null, payment_method_detail: detail };
}
