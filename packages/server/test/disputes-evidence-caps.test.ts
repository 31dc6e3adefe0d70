/**
 * A dispute's evidence caps (20 documents, 10 MiB decoded in all, over its POST and every PATCH): past
 * either, 422 INVALID_EVIDENCE naming the caps and nothing added; concurrent PATCHes never pass the caps
 * together (the check runs under the payment's row lock, in the transaction that adds the files).
 */
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { MAX_DISPUTE_BYTES, MAX_DISPUTE_DOCUMENTS } from '../src/payments/evidence.js';
import { expectProblem } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { chargedBackPayment, evidence, pdfBase64, postDispute } from './support/payments.js';

const MB = 1_048_576;
const files = (n: number, size = 2048): Schemas['DisputeEvidence'][] => {
  const content = pdfBase64(size);
  return Array.from({ length: n }, (_, i) => evidence({ file_name: `doc-${i}.pdf`, content }));
};

async function held(t: TestServer, transactionId: string): Promise<{ documents: number; bytes: number }> {
  const [row] = await t.db.query<{ documents: number; bytes: number }>(
    `SELECT count(e.id)::int AS documents, COALESCE(sum(e.size_bytes), 0)::int AS bytes
     FROM disputes d LEFT JOIN dispute_evidence e ON e.dispute_id = d.id WHERE d.transaction_id = $1`,
    [transactionId],
  );
  return row!;
}

async function expectOverCap(res: Response): Promise<void> {
  const problem = await expectProblem(res, 422, 'INVALID_EVIDENCE');
  expect(problem.errors).toEqual([{ path: '/body/evidence', message: expect.stringContaining('at most 20 documents and 10485760 bytes') }]);
  expect(problem.detail).toContain('at most 20 documents and 10485760 bytes (10 MiB)');
}

for (const backend of backends()) {
  describe(`dispute evidence caps on ${backend}`, () => {
    const t = useServer(backend);

    it('the caps are 20 documents and 10 MiB', () => {
      expect([MAX_DISPUTE_DOCUMENTS, MAX_DISPUTE_BYTES]).toEqual([20, 10 * MB]);
    });

    it('documents: 10 + 10 fit, the 21st is refused (422 naming the caps) and adds nothing', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      expect((await postDispute(t, payment.id, chargeback.id, { evidence: files(10) })).status).toBe(200);
      expect((await postDispute(t, payment.id, chargeback.id, { evidence: files(10) }, { method: 'PATCH' })).status).toBe(200);
      await expectOverCap(await postDispute(t, payment.id, chargeback.id, { evidence: files(1) }, { method: 'PATCH' }));
      expect(await held(t, chargeback.id)).toEqual({ documents: 20, bytes: 20 * 2048 });
    });

    it('bytes: ten 1 MiB files fill a dispute; one more small file is refused', async () => {
      const { payment, chargeback } = await chargedBackPayment(t);
      expect((await postDispute(t, payment.id, chargeback.id, { evidence: files(10, MB) })).status).toBe(200);
      await expectOverCap(await postDispute(t, payment.id, chargeback.id, { evidence: files(1, 128) }, { method: 'PATCH' }));
      expect(await held(t, chargeback.id)).toEqual({ documents: 10, bytes: 10 * MB });
    });

    it('concurrent PATCHes never pass the caps together (documents and bytes)', async () => {
      // Documents: 1 held, five PATCHes of 10 at once — only one fits (11), a second would make 21.
      const a = await chargedBackPayment(t);
      expect((await postDispute(t, a.payment.id, a.chargeback.id, { evidence: files(1) })).status).toBe(200);
      const byCount = await Promise.all(Array.from({ length: 5 }, () => postDispute(t, a.payment.id, a.chargeback.id, { evidence: files(10) }, { method: 'PATCH' })));
      expect(byCount.map((r) => r.status).sort()).toEqual([200, 422, 422, 422, 422]);
      expect(await held(t, a.chargeback.id)).toEqual({ documents: 11, bytes: 11 * 2048 });

      // Bytes: 1 small file held, three PATCHes of 5 MiB at once — only one fits.
      const b = await chargedBackPayment(t);
      expect((await postDispute(t, b.payment.id, b.chargeback.id, { evidence: files(1) })).status).toBe(200);
      const bySize = await Promise.all(Array.from({ length: 3 }, () => postDispute(t, b.payment.id, b.chargeback.id, { evidence: files(5, MB) }, { method: 'PATCH' })));
      expect(bySize.map((r) => r.status).sort()).toEqual([200, 422, 422]);
      for (const r of bySize) if (r.status === 422) await expectOverCap(r);
      expect(await held(t, b.chargeback.id)).toEqual({ documents: 6, bytes: 2048 + 5 * MB });
    });
  });
}
