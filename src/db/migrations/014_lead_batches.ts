import type { Kysely } from 'kysely';

/**
 * Lead batches: a list of leads submitted at once. Each accepted lead is an ordinary job (queued for the worker) that
 * names its batch and its place in the list; the leads the monthly quota left out are kept with the batch, so that its
 * results have a row for every lead that was sent.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('lead_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('template_id', 'text', (c) => c.references('lead_templates.id').onDelete('set null'))
    // A name for people (the dashboard sets the file's name).
    .addColumn('name', 'text')
    // Leads sent, and how many of them became jobs (the rest were left out by the quota).
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('accepted', 'integer', (c) => c.notNull())
    // The leads left out, as a JSON array of { position, first_name, last_name, email, reason, message }.
    .addColumn('not_accepted', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    // When the last of its jobs ended (batch.completed is sent then, once).
    .addColumn('completed_at', 'text')
    .execute();
  await db.schema.createIndex('lead_batches_account_idx').on('lead_batches').columns(['account_id', 'created_at']).execute();

  await db.schema.alterTable('lead_jobs').addColumn('batch_id', 'text').execute();
  await db.schema.alterTable('lead_jobs').addColumn('batch_position', 'integer').execute();
  await db.schema.createIndex('lead_jobs_batch_idx').on('lead_jobs').columns(['batch_id', 'batch_position']).execute();
}
