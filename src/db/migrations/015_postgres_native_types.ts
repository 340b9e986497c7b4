import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../connection.js';

/**
 * PostgreSQL as itself: timestamps become `timestamptz` and 0/1 flags `boolean` (until now both databases kept ISO
 * 8601 text and integers). The application sees no difference: the pool reads a timestamptz back as the same ISO text
 * and a boolean as 0/1 (connection.ts), and PostgreSQL takes ISO text and '1'/'0' as parameters for such columns.
 * SQLite has neither type and keeps its columns: nothing to do there.
 *
 * Each table is rewritten once (one ALTER TABLE for all of its columns); its indexes are rebuilt with it. Text
 * without an offset (only ever written by hand) is read as UTC, as the API reads a date without one. Defaults are
 * dropped and set again in the new type, and the two partial indexes whose predicate named a flag as `= 1` are made
 * again with the flag itself as the predicate.
 */

/** Every timestamp column, by table (rss_feeds.last_modified is an HTTP header kept verbatim, not a time). */
export const TIMESTAMP_COLUMNS: Record<string, string[]> = {
  accounts: ['created_at', 'updated_at'],
  users: ['last_seen_at', 'created_at', 'updated_at'],
  api_keys: ['expires_at', 'last_used_at', 'revoked_at', 'created_at'],
  publications: ['created_at', 'updated_at'],
  categories: ['created_at', 'updated_at'],
  issues: ['date', 'created_at', 'updated_at'],
  articles: ['date', 'created_at', 'updated_at'],
  roles: ['created_at', 'updated_at'],
  audit_log: ['created_at'],
  sign_in_failures: ['failed_at'],
  rss_feeds: ['job_started_at', 'imported_at', 'created_at', 'updated_at', 'next_sync_at', 'retry_not_before', 'queued_at'],
  feed_entries: ['synced_at'],
  lead_templates: ['created_at', 'updated_at'],
  lead_jobs: ['lease_until', 'created_at', 'updated_at', 'scraping_at', 'generating_at', 'sending_at', 'completed_at'],
  company_profiles: ['fetched_at', 'expires_at'],
  idempotency_keys: ['created_at', 'expires_at', 'renewed_at'],
  lead_batches: ['created_at', 'completed_at'],
  webhook_endpoints: ['previous_secret_until', 'failing_since', 'disabled_at', 'created_at', 'updated_at'],
  webhook_deliveries: ['next_attempt_at', 'lease_until', 'last_attempt_at', 'created_at', 'updated_at', 'delivered_at'],
  webhook_attempts: ['attempted_at'],
};

/** Every 0/1 flag column, by table, with its default where it has one. */
export const FLAG_COLUMNS: Record<string, Record<string, boolean | null>> = {
  articles: { visible: true },
  rss_feeds: { active: true, import_source: false, import_author: false, auto_publish: false, show_related_articles: false },
  lead_templates: { is_default: false },
  lead_jobs: { run_async: false },
  webhook_endpoints: { enabled: true },
  webhook_attempts: { succeeded: null },
};

/** Timestamp defaults (the epoch: feeds made before 004 were due at once). */
const TIMESTAMP_DEFAULTS: Record<string, Record<string, string>> = {
  rss_feeds: { next_sync_at: '1970-01-01T00:00:00.000Z' },
};

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`set local timezone = 'UTC'`.execute(db);
  // Their predicates compare a flag with 1, which a boolean cannot be: made again below.
  await sql`drop index lead_templates_one_default`.execute(db);
  await sql`drop index lead_jobs_queue_idx`.execute(db);

  const tables = new Set([...Object.keys(TIMESTAMP_COLUMNS), ...Object.keys(FLAG_COLUMNS)]);
  for (const table of tables) {
    const timestamps = TIMESTAMP_COLUMNS[table] ?? [];
    const flags = Object.entries(FLAG_COLUMNS[table] ?? {});
    const timestampDefaults = TIMESTAMP_DEFAULTS[table] ?? {};
    const withDefault = [...Object.keys(timestampDefaults), ...flags.filter(([, value]) => value !== null).map(([column]) => column)];
    const actions = [
      // An integer or text default cannot be cast to the new type: dropped first, set again after.
      ...withDefault.map((column) => sql`alter column ${sql.ref(column)} drop default`),
      ...timestamps.map((column) => sql`alter column ${sql.ref(column)} type timestamptz using ${sql.ref(column)}::timestamptz`),
      ...flags.map(([column]) => sql`alter column ${sql.ref(column)} type boolean using ${sql.ref(column)} <> 0`),
      ...Object.entries(timestampDefaults).map(([column, value]) => sql`alter column ${sql.ref(column)} set default ${sql.lit(value)}::timestamptz`),
      ...flags.flatMap(([column, value]) => (value === null ? [] : [sql`alter column ${sql.ref(column)} set default ${sql.raw(String(value))}`])),
    ];
    try {
      await sql`alter table ${sql.table(table)} ${sql.join(actions)}`.execute(db);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`${table}: ${reason}`);
    }
  }

  await sql`create unique index lead_templates_one_default on lead_templates (account_id) where is_default`.execute(db);
  await sql`create index lead_jobs_queue_idx on lead_jobs (status, seq) where run_async`.execute(db);
}
