/**
 * Schedules the slowest test files first, so the workers finish together instead of one of them
 * starting a 30 s file when the others are done (the `alone` files wait for them all).
 *
 * Vitest orders by the durations of the previous run when it has them (node_modules/.vite), and by file
 * size otherwise, which on a fresh clone (CI) starts small-but-slow files last. Then this list, measured
 * (docs/testing.md), goes first; a file missing from it only loses its head start.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Measured on a full `npm test` (2026-11-26, after the connectors of issue 22), slowest first.
export const SLOWEST_FIRST = [
  'test/conformance/conformance.test.ts',
  'test/reconciliation-sigkill.test.ts',
  'test/data-at-rest.test.ts',
  'test/webhooks-delivery.test.ts',
  'test/platform.test.ts',
  'test/auth-failures.test.ts',
  'test/disputes-lifecycle.test.ts',
  'test/lifecycle-sigkill.test.ts',
  'test/pool-burst.test.ts',
  'test/disputes-evidence.test.ts',
  'test/connector-adyen.test.ts',
  'test/oversized-upload.test.ts',
  'test/payments-lifecycle.test.ts',
  'test/cross-tenant.test.ts',
  'test/docs-browser.test.ts',
  'test/payments-chargebacks.test.ts',
  'test/vault.test.ts',
  'test/lifecycle-providers.test.ts',
  'test/connector-mercado-pago.test.ts',
  'test/connector-failover.test.ts',
  'test/disputes.test.ts',
  'test/orchestration.test.ts',
  'test/vault-security.test.ts',
  'test/public-base-url.test.ts',
];

export default class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const key = (f: TestSpecification) => `${f.project.name}:${relative(this.ctx.config.root, f.moduleId)}`;
    // Every file timed by an earlier run on this machine: those durations are the better guide.
    if (sorted.every((f) => this.ctx.cache.getFileTestResults(key(f)))) return sorted;
    const position = new Map(sorted.map((f, i) => [f, i]));
    const rank = (f: TestSpecification) => {
      const r = SLOWEST_FIRST.indexOf(relative(this.ctx.config.root, f.moduleId));
      return r === -1 ? SLOWEST_FIRST.length : r;
    };
    // Within a project (groups and projects keep the base order): listed files first, in list order.
    return sorted.sort((a, b) => (a.project === b.project ? rank(a) - rank(b) : 0) || position.get(a)! - position.get(b)!);
  }
}
