import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../connection.js';
import { idColumn } from './columns.js';

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  // Who signs the outreach emails and what they offer; the built-in generator and the {{sender*}} variables read them.
  await db.schema.alterTable('accounts').addColumn('sender_name', 'text').execute();
  await db.schema.alterTable('accounts').addColumn('sender_offer', 'text').execute();

  await db.schema
    .createTable('lead_templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('lead_templates_account_name_unique', ['account_id', 'name'])
    .execute();
  // At most one default template per account, held by the database rather than by care.
  await sql`create unique index lead_templates_one_default on lead_templates (account_id) where is_default = 1`.execute(db);

  // A job per accepted lead. Each status it passes through keeps its time: created_at (pending), scraping_at,
  // generating_at, sending_at, and completed_at for whichever end it reached (completed, failed or rejected).
  await db.schema
    .createTable('lead_jobs')
    // seq orders jobs exactly (two jobs may share a millisecond); id is the UUID the API shows.
    .addColumn('seq', idColumn(dialect), (c) => c.primaryKey())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('template_id', 'text', (c) => c.references('lead_templates.id').onDelete('set null'))
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('run_async', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('send_to', 'text')
    .addColumn('error_message', 'text')
    .addColumn('rejection_reason', 'text')
    .addColumn('email_subject', 'text')
    .addColumn('email_body', 'text')
    .addColumn('company', 'text')
    .addColumn('research_note', 'text')
    .addColumn('generator', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('scraping_at', 'text')
    .addColumn('generating_at', 'text')
    .addColumn('sending_at', 'text')
    .addColumn('completed_at', 'text')
    .execute();
  await db.schema.createIndex('lead_jobs_account_created_idx').on('lead_jobs').columns(['account_id', 'seq']).execute();
  await db.schema.createIndex('lead_jobs_account_status_idx').on('lead_jobs').columns(['account_id', 'status', 'seq']).execute();
  // The worker's queue: asynchronous jobs waiting for, or holding, a lease.
  await sql`create index lead_jobs_queue_idx on lead_jobs (status, seq) where run_async = 1`.execute(db);

  // Company research, one row per domain, reused until expires_at.
  await db.schema
    .createTable('company_profiles')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('profile', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('fallback_reason', 'text')
    .addColumn('fetched_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();

  // Idempotency-Key: the first response to a key is replayed for 24 hours.
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_idx').on('idempotency_keys').column('expires_at').execute();

  // Leads counted against the plan's monthly quota (those that passed the business-email check).
  await db.schema
    .createTable('lead_usage')
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('leads', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('lead_usage_pk', ['account_id', 'month'])
    .execute();
}
