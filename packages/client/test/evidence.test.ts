/** Evidence helpers: the API's checks (1 MB, PDF header/trailer, file name) happen before anything is sent. */
import { mkdtemp, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { evidenceFromBlob, evidenceFromBytes, MAX_EVIDENCE_BYTES, PayorchEvidenceError } from '../src/index.js';
import { evidenceFromFile } from '../src/node.js';
import { pdfOfSize, tinyPdf } from './support/pdf.js';

const receipt = { file_name: 'receipt.pdf', content_category: 'RECEIPT' } as const;

describe('evidenceFromBytes', () => {
  it('builds the DisputeEvidence item with standard base64 of the exact bytes', () => {
    const pdf = tinyPdf();
    const item = evidenceFromBytes(pdf, receipt);
    expect(item).toEqual({ content_type: 'application/pdf', file_name: 'receipt.pdf', content_category: 'RECEIPT', content: Buffer.from(pdf).toString('base64') });
    expect(new Uint8Array(Buffer.from(item.content, 'base64'))).toEqual(pdf);
  });

  it('accepts exactly 1 MB (and encodes it correctly), and an ArrayBuffer', () => {
    const pdf = pdfOfSize(MAX_EVIDENCE_BYTES);
    const item = evidenceFromBytes(pdf.buffer as ArrayBuffer, receipt);
    expect(item.content).toBe(Buffer.from(pdf).toString('base64'));
    expect(item.content.length).toBe(1_398_104); // the spec's maxLength for 1 MB
  });

  it('accepts a view into a larger buffer (a Node Buffer slice)', () => {
    const pdf = tinyPdf();
    const big = Buffer.concat([Buffer.from('garbage'), Buffer.from(pdf), Buffer.from('more')]);
    const view = big.subarray(7, 7 + pdf.length);
    expect(evidenceFromBytes(view, receipt).content).toBe(Buffer.from(pdf).toString('base64'));
  });

  const bad: [string, Uint8Array, string, RegExp][] = [
    ['over 1 MB', pdfOfSize(MAX_EVIDENCE_BYTES + 1), 'big.pdf', /1048577 bytes; the limit is 1048576/],
    ['not a PDF', new TextEncoder().encode('Hello, I am a text file.\n%%EOF\n'), 'notes.pdf', /not a PDF/],
    ['a PDF without its trailer', tinyPdf().subarray(0, 300), 'cut.pdf', /no %%EOF/],
    ['empty', new Uint8Array(0), 'empty.pdf', /empty/],
    ['a file name with a path', tinyPdf(), '../etc/receipt.pdf', /file_name/],
    ['a file name too short', tinyPdf(), 'a', /file_name/],
    ['a file name with a control character', tinyPdf(), 'rec\neipt.pdf', /file_name/],
  ];
  it.each(bad)('refuses %s with PayorchEvidenceError', (_name, bytes, file_name, message) => {
    const attempt = () => evidenceFromBytes(bytes, { file_name, content_category: 'RECEIPT' });
    expect(attempt).toThrow(PayorchEvidenceError);
    expect(attempt).toThrow(message);
  });
});

describe('evidenceFromBlob', () => {
  it('reads a File, naming the evidence after it', async () => {
    const file = new File([tinyPdf()], 'invoice-42.pdf', { type: 'application/pdf' });
    const item = await evidenceFromBlob(file, { content_category: 'PAYMENT_DETAIL' });
    expect(item).toMatchObject({ file_name: 'invoice-42.pdf', content_category: 'PAYMENT_DETAIL', content: Buffer.from(tinyPdf()).toString('base64') });
  });

  it('refuses an oversized Blob from its size, before reading it', async () => {
    const blob = new Blob([pdfOfSize(MAX_EVIDENCE_BYTES + 10)]);
    let read = false;
    Object.defineProperty(blob, 'arrayBuffer', { value: () => ((read = true), Promise.reject(new Error('must not be read'))) });
    await expect(evidenceFromBlob(blob, { file_name: 'big.pdf', content_category: 'RECEIPT' })).rejects.toThrow(PayorchEvidenceError);
    expect(read).toBe(false);
  });
});

describe('evidenceFromFile (@payorch/client/node)', () => {
  it('reads a PDF from disk, named after the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'payorch-evidence-'));
    const path = join(dir, 'delivery-proof.pdf');
    await writeFile(path, tinyPdf());
    const item = await evidenceFromFile(path, { content_category: 'PROOF_OF_DELIVERY' });
    expect(item).toEqual({ content_type: 'application/pdf', file_name: 'delivery-proof.pdf', content_category: 'PROOF_OF_DELIVERY', content: Buffer.from(tinyPdf()).toString('base64') });
    expect((await evidenceFromFile(path, { content_category: 'RECEIPT', file_name: 'renamed.pdf' })).file_name).toBe('renamed.pdf');
  });

  it('refuses a file over 1 MB from its size (a 2 GB sparse file is not read)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'payorch-evidence-'));
    const path = join(dir, 'huge.pdf');
    await writeFile(path, '%PDF-1.4\n');
    await truncate(path, 2 * 1024 ** 3);
    await expect(evidenceFromFile(path, { content_category: 'RECEIPT' })).rejects.toThrow(/2147483648 bytes; the limit is 1048576/);
  });

  it('refuses a file that is not a PDF', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'payorch-evidence-'));
    const path = join(dir, 'photo.pdf');
    await writeFile(path, Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]));
    await expect(evidenceFromFile(path, { content_category: 'RECEIPT' })).rejects.toThrow(/not a PDF/);
  });
});
