/** The retention job as a long-lived service: started with the server, stopped before the database closes. */
import type { ServiceDeps } from '../services.js';
import { RetentionJob } from './job.js';

declare module '../context.js' {
  interface AppServices {
    /** Removes records past their lifetime (retention/job.ts). */
    retention: RetentionJob;
  }
}

export function buildRetentionServices(deps: ServiceDeps): { retention: RetentionJob } {
  const retention = new RetentionJob({ db: deps.db, log: deps.log });
  if (deps.onClose) {
    retention.start();
    deps.onClose(() => retention.stop());
  }
  return { retention };
}
