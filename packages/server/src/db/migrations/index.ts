import type { Migration } from '../migrate.js';
import platform from './0001_platform.js';
import vault from './0002_vault.js';
import payments from './0003_payments.js';
import rateLimits from './0004_rate_limits.js';
import webhooks from './0005_webhooks.js';
import evidenceLz4 from './0006_evidence_lz4.js';
import sealedSecrets from './0007_sealed_secrets.js';
import paymentPayer from './0008_payment_payer.js';
import customerDeletion from './0009_customer_deletion.js';
import eventLog from './0010_event_log.js';
import paymentSearch from './0011_payment_search.js';
import retention from './0012_retention.js';
import customerList from './0013_customer_list.js';
import enrolledCardCountry from './0014_enrolled_card_country.js';
import routing from './0016_routing.js';
import orchestration from './0017_orchestration.js';
import paymentMethodKeys from './0018_payment_method_keys.js';
import reconciliationQueue from './0019_reconciliation_queue.js';
import connectionLifecycle from './0020_connection_lifecycle.js';
import connectionNotifications from './0021_connection_notifications.js';
import sandboxAcquirerLedgers from './0022_sandbox_acquirer_ledgers.js';
import asyncPaymentExpiry from './0023_async_payment_expiry.js';
import sandboxPendingPayments from './0024_sandbox_pending_payments.js';
import checkout from './0025_checkout.js';
import paymentLinks from './0026_payment_links.js';
import yunoWebhooks from './0027_yuno_webhooks.js';
import sandboxMethodRoutings from './0028_sandbox_method_routings.js';
import checkoutLimits from './0029_checkout_limits.js';
import lateApprovalReversals from './0030_late_approval_reversals.js';
import outboxOrdering from './0031_outbox_ordering.js';
import outboxGivenUp from './0032_outbox_given_up.js';
import eventResourceIndex from './0033_event_resource_index.js';
import captureAdditionalData from './0034_capture_additional_data.js';
import webhookRedeliverAfterAttempt from './0035_webhook_redeliver_after_attempt.js';
import webhookClaimIndexes from './0036_webhook_claim_indexes.js';

/** Every migration, in order. Add a new file (next number) and list it here; never edit an applied one. */
export const migrations: readonly Migration[] = [
  platform, vault, payments, rateLimits, webhooks, evidenceLz4, sealedSecrets, paymentPayer, customerDeletion, eventLog, paymentSearch, retention,
  customerList,
  enrolledCardCountry,
  routing,
  orchestration,
  paymentMethodKeys,
  reconciliationQueue,
  connectionLifecycle,
  connectionNotifications,
  sandboxAcquirerLedgers,
  asyncPaymentExpiry,
  sandboxPendingPayments,
  checkout,
  paymentLinks,
  yunoWebhooks,
  sandboxMethodRoutings,
  checkoutLimits,
  lateApprovalReversals,
  outboxOrdering,
  outboxGivenUp,
  eventResourceIndex,
  captureAdditionalData,
  webhookRedeliverAfterAttempt,
  webhookClaimIndexes,
];
