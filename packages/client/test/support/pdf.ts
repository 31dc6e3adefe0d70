/** Small, valid PDFs for evidence tests (built in memory; no binary fixtures in the repo). */
const encoder = new TextEncoder();

/** A one-page PDF with a line of text, with a correct xref table. */
export function tinyPdf(text = 'Receipt for order 42: delivered and signed for.'): Uint8Array<ArrayBuffer> {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    (() => {
      const stream = `BT /F1 12 Tf 72 720 Td (${text.replace(/[()\\]/g, '\\$&')}) Tj ET`;
      return `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
    })(),
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return encoder.encode(out);
}

/** A PDF-shaped file of exactly `size` bytes (header, a comment of padding, trailer). */
export function pdfOfSize(size: number): Uint8Array<ArrayBuffer> {
  const head = encoder.encode('%PDF-1.4\n%');
  const tail = encoder.encode('\n%%EOF\n');
  const bytes = new Uint8Array(size).fill(0x41);
  bytes.set(head, 0);
  bytes.set(tail, size - tail.length);
  return bytes;
}
