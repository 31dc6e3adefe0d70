/**
 * Dispute evidence checks (docs/design.md §5) beyond the schema: a safe file name, strict base64 (RFC 4648
 * standard alphabet, padding required, no whitespace, canonical), at most 1,048,576 decoded bytes
 * (computed from the length, before decoding), and real PDF bytes (`%PDF-` header, `%%EOF` trailer).
 * Each string is decoded once, into the buffer that is then checked, hashed and stored.
 */
import { createHash } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { FieldError } from '../http/problems.js';

export const MAX_EVIDENCE_BYTES = 1_048_576;

/**
 * What one dispute may hold in all, over its POST and every PATCH (spec: the dispute operations). Card
 * networks cap a case's documentation (Mastercom 18 MB per transaction and under 14.5 MB recommended,
 * Amex 25 MB, Discover 3 MB); 10 MiB is one full request (10 files of 1 MiB), and 20 documents are two.
 */
export const MAX_DISPUTE_DOCUMENTS = 20;
export const MAX_DISPUTE_BYTES = 10 * MAX_EVIDENCE_BYTES;

/** Why adding `documents` to a dispute that holds `held` would pass its caps, or undefined when it fits. */
export function disputeCapProblem(held: { documents: number; bytes: number }, documents: readonly CheckedEvidence[]): FieldError | undefined {
  const count = held.documents + documents.length;
  const bytes = held.bytes + documents.reduce((sum, d) => sum + d.content.length, 0);
  if (count <= MAX_DISPUTE_DOCUMENTS && bytes <= MAX_DISPUTE_BYTES) return undefined;
  return {
    path: '/body/evidence',
    message:
      `would bring the dispute to ${count} documents and ${bytes} bytes; a dispute holds at most ${MAX_DISPUTE_DOCUMENTS} documents ` +
      `and ${MAX_DISPUTE_BYTES} bytes (10 MiB) decoded in all (it holds ${held.documents} documents, ${held.bytes} bytes)`,
  };
}

export interface CheckedEvidence {
  fileName: string;
  contentType: string;
  category: string;
  content: Buffer;
  sha256: Buffer;
}

export type EvidenceCheck = { ok: true; documents: CheckedEvidence[] } | { ok: false; errors: FieldError[] };

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_BODY = /^[A-Za-z0-9+/]*$/;
const PDF_HEADER = Buffer.from('%PDF-', 'latin1');
const PDF_TRAILER = Buffer.from('%%EOF', 'latin1');
// PDF white-space characters (ISO 32000 7.2.2) a writer may leave after the trailer.
const PDF_WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
// Characters that make a name unsafe to show or save: Windows-reserved ones and bidirectional controls
// (which can disguise "fdp.exe" as "exe.pdf"). The schema already refuses separators and C0/C1 controls.
const UNSAFE_NAME_CHARS = /[<>:"|?*\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

export function checkEvidence(items: readonly Schemas['DisputeEvidence'][]): EvidenceCheck {
  const errors: FieldError[] = [];
  const documents: CheckedEvidence[] = [];
  items.forEach((item, i) => {
    const base = `/body/evidence/${i}`;
    const nameProblem = fileNameProblem(item.file_name);
    if (nameProblem) errors.push({ path: `${base}/file_name`, message: nameProblem });
    const decoded = decodeStrictBase64(item.content);
    if (!decoded.ok) {
      errors.push({ path: `${base}/content`, message: decoded.message });
      return;
    }
    const pdfProblem = pdfBytesProblem(decoded.bytes);
    if (pdfProblem) {
      errors.push({ path: `${base}/content`, message: pdfProblem });
      return;
    }
    documents.push({
      fileName: item.file_name,
      contentType: item.content_type,
      category: item.content_category,
      content: decoded.bytes,
      sha256: createHash('sha256').update(decoded.bytes).digest(),
    });
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, documents };
}

function fileNameProblem(name: string): string | undefined {
  if (UNSAFE_NAME_CHARS.test(name)) return 'contains characters not allowed in a file name (<>:"|?* or bidirectional controls)';
  if (/^[\s.]*$/u.test(name)) return 'must contain more than dots and spaces';
  if (name !== name.trim()) return 'must not start or end with whitespace';
  if (name.endsWith('.')) return 'must not end with a dot';
  return undefined;
}

/**
 * Strict RFC 4648 §4 base64, decoded at most once and only when the size is within the limit. The fast
 * path allocates nothing but the decoded bytes: Node's decoder skips any character outside the base64
 * and base64url alphabets (and stops at padding inside the string), and any such character makes the
 * result shorter than the length promises; the two base64url characters and non-canonical padding bits
 * are checked directly. The checks in base64Problem only explain a failure.
 */
export function decodeStrictBase64(s: string, maxBytes = MAX_EVIDENCE_BYTES): { ok: true; bytes: Buffer } | { ok: false; message: string } {
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  const size = (s.length / 4) * 3 - pad;
  if (s.length % 4 === 0 && size <= maxBytes && !s.includes('-') && !s.includes('_') && canonicalPadding(s, pad)) {
    const bytes = Buffer.from(s, 'base64');
    if (bytes.length === size) return { ok: true, bytes };
  }
  return { ok: false, message: base64Problem(s, pad, size, maxBytes) };
}

/** The bits the padding leaves unused in the last character before it must be zero (else two encodings decode alike). */
function canonicalPadding(s: string, pad: number): boolean {
  if (pad === 0) return true;
  const last = ALPHABET.indexOf(s.charAt(s.length - pad - 1));
  return last >= 0 && (last & (pad === 2 ? 0x0f : 0x03)) === 0;
}

/** Why `s` is not strict base64 within the limit, most specific reason first. */
function base64Problem(s: string, pad: number, size: number, maxBytes: number): string {
  const body = s.slice(0, s.length - pad);
  if (!BASE64_BODY.test(body)) {
    if (/\s/.test(body)) return 'is not strict base64: it contains whitespace or line breaks';
    if (/[-_]/.test(body)) return 'is not strict base64: it uses the URL-safe alphabet (- or _); use + and /';
    if (body.includes('=')) return 'is not strict base64: padding (=) may only end the string';
    return 'is not strict base64: it contains characters outside the base64 alphabet';
  }
  if (s.length % 4 !== 0) return 'is not strict base64: its length must be a multiple of 4 (padding is required)';
  // Non-canonical encodings (unused bits set before the padding) decode ambiguously: refuse them.
  if (!canonicalPadding(s, pad)) return 'is not strict base64: the bits before the padding must be zero (non-canonical encoding)';
  if (size > maxBytes) return `decodes to ${size} bytes; at most ${maxBytes} bytes (1 MB) are allowed`;
  return 'is not strict base64';
}

/** The bytes must be a PDF: `%PDF-` first, `%%EOF` last (trailing PDF white-space allowed). */
function pdfBytesProblem(bytes: Buffer): string | undefined {
  if (bytes.length < PDF_HEADER.length || !bytes.subarray(0, PDF_HEADER.length).equals(PDF_HEADER)) {
    return 'is not a PDF: the file does not start with %PDF-';
  }
  let end = bytes.length;
  while (end > 0 && PDF_WHITESPACE.has(bytes[end - 1]!)) end -= 1;
  if (end < PDF_HEADER.length + PDF_TRAILER.length || !bytes.subarray(end - PDF_TRAILER.length, end).equals(PDF_TRAILER)) {
    return 'is not a complete PDF: the file does not end with %%EOF';
  }
  return undefined;
}
