/**
 * Dispute evidence: a PDF of at most 1 MB, sent base64-encoded. These helpers run the server's checks
 * before anything is sent (size, `%PDF-` header, `%%EOF` trailer, file name) so a mistake fails fast and
 * locally instead of as a 1.4 MB upload answered by 422 INVALID_EVIDENCE. Browser-safe: no Buffer.
 * For a file path on Node, see `evidenceFromFile` in `@payorch/client/node`.
 */
import type { Schemas } from '@payorch/types';

export type DisputeEvidence = Schemas['DisputeEvidence'];
export type DisputeEvidenceCategory = Schemas['DisputeEvidenceCategory'];

/** The largest evidence file the API accepts, in bytes (decoded). */
export const MAX_EVIDENCE_BYTES = 1_048_576;

/** An evidence file that the API would refuse; nothing was sent. */
export class PayorchEvidenceError extends Error {
  override readonly name = 'PayorchEvidenceError';
  readonly code = 'INVALID_EVIDENCE';
}

export interface EvidenceOptions {
  /** 3–255 characters, no path separators or control characters. */
  file_name: string;
  content_category: DisputeEvidenceCategory;
}

const PDF_HEADER = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
const PDF_TRAILER = [0x25, 0x25, 0x45, 0x4f, 0x46]; // %%EOF
// Where the trailer may sit: readers look for it in the last kilobyte (trailing whitespace, comments).
const TRAILER_WINDOW = 1024;
const FILE_NAME = /^[^/\\\x00-\x1F\x7F-\x9F]{3,255}$/;

function indexOf(bytes: Uint8Array, needle: number[], from: number): number {
  outer: for (let i = Math.max(0, from); i <= bytes.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** Throws `PayorchEvidenceError` unless the bytes are a PDF of at most 1 MB. */
export function checkEvidenceBytes(bytes: Uint8Array): void {
  if (bytes.length > MAX_EVIDENCE_BYTES) {
    throw new PayorchEvidenceError(`evidence is ${bytes.length} bytes; the limit is ${MAX_EVIDENCE_BYTES} bytes (1 MB)`);
  }
  if (bytes.length === 0) throw new PayorchEvidenceError('evidence is empty');
  if (indexOf(bytes, PDF_HEADER, 0) !== 0) throw new PayorchEvidenceError('evidence is not a PDF (it does not start with %PDF-)');
  if (indexOf(bytes, PDF_TRAILER, bytes.length - TRAILER_WINDOW) === -1) {
    throw new PayorchEvidenceError('evidence is not a complete PDF (no %%EOF trailer at the end)');
  }
}

/** Throws `PayorchEvidenceError` unless the name is one the API accepts. */
export function checkEvidenceFileName(fileName: string): void {
  if (!FILE_NAME.test(fileName)) {
    throw new PayorchEvidenceError(`evidence file_name ${JSON.stringify(fileName)} must be 3–255 characters without / \\ or control characters`);
  }
}

/** Standard base64 with padding (RFC 4648), without Buffer so it runs in browsers too. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  const chunk = 0x8000; // String.fromCharCode's argument count stays well under engine limits
  for (let i = 0; i < bytes.length; i += chunk) binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  return btoa(binary);
}

/** A `DisputeEvidence` item from the PDF's bytes, checked before sending. */
export function evidenceFromBytes(bytes: Uint8Array | ArrayBuffer, options: EvidenceOptions): DisputeEvidence {
  // isView rather than instanceof: works for Buffers and for arrays from another realm (iframes, workers).
  const view = ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new Uint8Array(bytes);
  checkEvidenceFileName(options.file_name);
  checkEvidenceBytes(view);
  return { content_type: 'application/pdf', file_name: options.file_name, content_category: options.content_category, content: toBase64(view) };
}

/**
 * A `DisputeEvidence` item from a `Blob` or `File` (a browser file input, `fetch(...).blob()`); the size is
 * checked before the content is read. `file_name` defaults to the File's name.
 */
export async function evidenceFromBlob(
  blob: Blob,
  options: Omit<EvidenceOptions, 'file_name'> & { file_name?: string },
): Promise<DisputeEvidence> {
  const file_name = options.file_name ?? (blob as Blob & { name?: string }).name ?? '';
  checkEvidenceFileName(file_name);
  if (blob.size > MAX_EVIDENCE_BYTES) throw new PayorchEvidenceError(`evidence is ${blob.size} bytes; the limit is ${MAX_EVIDENCE_BYTES} bytes (1 MB)`);
  return evidenceFromBytes(new Uint8Array(await blob.arrayBuffer()), { file_name, content_category: options.content_category });
}
