import { randomBytes } from 'node:crypto';

const LETTERS = 'abcdef';

/**
 * An id the sandbox acquirers and provider make up: `sbx_<kind>_` and the bytes in hex, its first character
 * always a letter. Plain hex is all digits about one time in 1,850 (for 8 bytes), and a run of 13–19 digits
 * after `_` reads as a card number to any scanner of logs or tables (ours, test/support/sensitive-data-scan.ts,
 * flagged `sbx_txn_6008804653048664`). `bytes` defaults to 8 random ones; a derived id passes its own.
 */
export function sandboxId(kind: string, bytes: Uint8Array = randomBytes(8)): string {
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  return `sbx_${kind}_${LETTERS[parseInt(hex[0] ?? '0', 16) % LETTERS.length]}${hex.slice(1)}`;
}
