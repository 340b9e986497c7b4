import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { idColumn } from './columns.js';

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('roles')
    .addColumn('id', idColumn(dialect), (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('publication_id', 'integer', (c) => c.notNull().references('publications.id').onDelete('cascade'))
    .addColumn('access_level', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('roles_user_publication_unique', ['user_id', 'publication_id'])
    .execute();
  await db.schema.createIndex('roles_publication_idx').on('roles').column('publication_id').execute();

  // api: made by a person for scripts; session: from signing in (12 h); impersonation: from "become" (1 h).
  await db.schema
    .alterTable('api_keys')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('api'))
    .execute();
  await db.schema
    .alterTable('api_keys')
    .addColumn('impersonator_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', idColumn(dialect), (c) => c.primaryKey())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('actor_id', 'integer')
    .addColumn('impersonator_id', 'integer')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_user_id', 'integer')
    .addColumn('ip', 'text')
    .addColumn('details', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_account_idx').on('audit_log').columns(['account_id', 'id']).execute();

  // Failed sign-ins, per email and per IP, counted over a sliding window to throttle guessing.
  await db.schema
    .createTable('sign_in_failures')
    .addColumn('id', idColumn(dialect), (c) => c.primaryKey())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('failed_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_failures_scope_idx').on('sign_in_failures').columns(['scope', 'failed_at']).execute();
}
