/**
 * The webhooks domain's long-lived parts: the secret box (keys derived from the vault keyring) and the
 * delivery worker, started with the server and stopped before the database closes (ServiceDeps.onClose).
 */
import type { Queryable } from '../db/database.js';
import type { ServiceDeps } from '../services.js';
import type { Keyring } from '../keyring/keyring.js';
import { webhooksRepository as repo } from './repository.js';
import { createSecretBox, type SecretBox } from './secrets.js';
import type { WebhookRules } from './service.js';
import { openCredential, sealCredential } from './yuno-view.js';
import { DeliveryWorker } from './worker.js';

export interface WebhookServices {
  rules: WebhookRules;
  /** The server's own worker (tests stop it and drive one of their own with runOnce). */
  worker: DeliveryWorker;
}

declare module '../context.js' {
  interface AppServices {
    /** Webhook secrets and delivery (webhooks/services.ts). */
    webhooks: WebhookServices;
  }
}

export class WebhookKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookKeyError';
  }
}

/** Re-seals secrets stored under an older vault key with the active one, so retiring old keys stays safe. */
export async function rewrapSecrets(db: Queryable, box: SecretBox): Promise<number> {
  return db.transaction(async (tx) => {
    const stale = await repo.secretsNotUnder(tx, box.activeKeyId);
    for (const row of stale) {
      let secret: string;
      try {
        secret = box.open(row.endpoint_id, row.id, { ciphertext: row.ciphertext, iv: row.iv, tag: row.tag, keyId: row.key_id });
      } catch {
        throw new WebhookKeyError(
          `webhook signing secrets are sealed under vault key ${row.key_id}, which is missing from VAULT_ENCRYPTION_KEY (or does not match); add it back after the active key`,
        );
      }
      await repo.resealSecret(tx, row.id, box.seal(row.endpoint_id, row.id, secret));
    }
    // Yuno's delivery headers (yuno-view.ts), sealed by the same box.
    const staleCredentials = await repo.credentialsNotUnder(tx, box.activeKeyId);
    for (const row of staleCredentials) {
      let value: string;
      try {
        value = openCredential(box, row);
      } catch {
        throw new WebhookKeyError(
          `webhook delivery headers are sealed under vault key ${row.key_id}, which is missing from VAULT_ENCRYPTION_KEY (or does not match); add it back after the active key`,
        );
      }
      await repo.upsertCredential(tx, sealCredential(box, row.endpoint_id, row.kind, value));
    }
    return stale.length + staleCredentials.length;
  });
}

export async function buildWebhookServices(deps: ServiceDeps, keyring: Keyring): Promise<{ webhooks: WebhookServices }> {
  const secrets = createSecretBox(keyring);
  const rewrapped = await rewrapSecrets(deps.db, secrets);
  if (rewrapped > 0) deps.log.info({ rewrapped, keyId: secrets.activeKeyId }, 'webhook signing secrets re-sealed under the active key');
  const worker = new DeliveryWorker({ db: deps.db, log: deps.log, secrets, allowLoopback: deps.config.sandbox });
  if (deps.onClose) {
    worker.start();
    deps.onClose(() => worker.stop());
  } else {
    deps.log.warn('webhook delivery worker not started: the server gave no way to stop it');
  }
  return { webhooks: { rules: { secrets, sandbox: deps.config.sandbox, clock: () => new Date() }, worker } };
}
