/**
 * @payorch/client/node: helpers that need Node's file system. Everything else is in `@payorch/client`,
 * which stays free of Node-only imports so it also runs in browsers, Deno and Bun.
 */
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { checkEvidenceFileName, evidenceFromBytes, MAX_EVIDENCE_BYTES, PayorchEvidenceError, type DisputeEvidence, type EvidenceOptions } from './evidence.js';

/**
 * A `DisputeEvidence` item from a PDF on disk: the size is checked before the file is read, then the
 * bytes (PDF header and trailer) before anything is sent. `file_name` defaults to the path's base name.
 */
export async function evidenceFromFile(
  path: string,
  options: Omit<EvidenceOptions, 'file_name'> & { file_name?: string },
): Promise<DisputeEvidence> {
  const file_name = options.file_name ?? basename(path);
  checkEvidenceFileName(file_name);
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size > MAX_EVIDENCE_BYTES) throw new PayorchEvidenceError(`${path} is ${size} bytes; the limit is ${MAX_EVIDENCE_BYTES} bytes (1 MB)`);
    return evidenceFromBytes(await handle.readFile(), { file_name, content_category: options.content_category });
  } finally {
    await handle.close();
  }
}
