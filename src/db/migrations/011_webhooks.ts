import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../connection.js';
import { primaryId } from './columns.js';

/**
 * Webhooks: an account's endpoints, one delivery per event and endpoint (the queue the delivery worker leases, as the
 * lead worker leases queued jobs), and every attempt of a delivery.
 */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', ...primaryId(dialect))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    // The event types it takes, as a JSON array of strings.
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    // The signing secret (`whsec_` and base64): the receiver verifies with the same secret, so it cannot be a hash.
    .addColumn('secret', 'text', (c) => c.notNull())
    // After a rotation, the old secret still signs (beside the new one) until this time.
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'text')
    // Since when every attempt failed (null after a success): past the limit, the endpoint is disabled.
    .addColumn('failing_since', 'text')
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_account_idx').on('webhook_endpoints').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', ...primaryId(dialect))
    .addColumn('endpoint_id', 'integer', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    // The event's id (the webhook-id header): one event sent to several endpoints keeps one id.
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    // The body exactly as signed and sent.
    .addColumn('payload', 'text', (c) => c.notNull())
    // pending (waiting for its next attempt), succeeded, failed (gave up).
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // Attempts since the delivery was (re)queued: where it is in the retry schedule.
    .addColumn('round_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_duration_ms', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .execute();
  await db.schema.createIndex('webhook_deliveries_endpoint_idx').on('webhook_deliveries').columns(['endpoint_id', 'id']).execute();
  // The worker's queue: deliveries waiting for an attempt.
  await sql`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending'`.execute(db);

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', ...primaryId(dialect))
    .addColumn('delivery_id', 'integer', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempted_at', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('succeeded', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').columns(['delivery_id', 'id']).execute();
}
