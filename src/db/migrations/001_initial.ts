import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../connection.js';
import { idColumn } from './columns.js';

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', idColumn(dialect), (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull().defaultTo('free'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', idColumn(dialect), (c) => c.primaryKey())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('firstname', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('lastname', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('password_hash', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('sign_in_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_seen_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_account_idx').on('users').column('account_id').execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', idColumn(dialect), (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_keys_user_idx').on('api_keys').column('user_id').execute();

  await db.schema
    .createTable('publications')
    .addColumn('id', idColumn(dialect), (c) => c.primaryKey())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('app_id', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('publications_account_idx').on('publications').column('account_id').execute();

  for (const table of ['categories', 'issues'] as const) {
    let builder = db.schema
      .createTable(table)
      .addColumn('id', idColumn(dialect), (c) => c.primaryKey())
      .addColumn('publication_id', 'integer', (c) => c.notNull().references('publications.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull());
    if (table === 'issues') builder = builder.addColumn('date', 'text');
    await builder
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex(`${table}_publication_idx`).on(table).columns(['publication_id', 'id']).execute();
  }
  await db.schema.createIndex('categories_publication_name_idx').on('categories').columns(['publication_id', 'name']).unique().execute();

  await db.schema
    .createTable('articles')
    .addColumn('id', idColumn(dialect), (c) => c.primaryKey())
    .addColumn('publication_id', 'integer', (c) => c.notNull().references('publications.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('info', 'text')
    .addColumn('html', 'text')
    .addColumn('assets', 'text')
    .addColumn('cover', 'text')
    .addColumn('date', 'text')
    .addColumn('unlock_type', 'text', (c) => c.notNull().defaultTo('free'))
    .addColumn('issue_id', 'integer', (c) => c.references('issues.id').onDelete('set null'))
    .addColumn('position', 'integer')
    .addColumn('visible', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('rss_feed_id', 'integer')
    .addColumn('source', 'text')
    .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // One index per sortable column, each led by the publication: every listing is scoped to one publication.
  for (const column of ['id', 'date', 'title', 'position', 'created_at', 'updated_at']) {
    await db.schema
      .createIndex(`articles_publication_${column}_idx`)
      .on('articles')
      .columns(column === 'id' ? ['publication_id', 'id'] : ['publication_id', column, 'id'])
      .execute();
  }
  await db.schema.createIndex('articles_issue_idx').on('articles').columns(['issue_id', 'position']).execute();

  await db.schema
    .createTable('article_categories')
    .addColumn('article_id', 'integer', (c) => c.notNull().references('articles.id').onDelete('cascade'))
    .addColumn('category_id', 'integer', (c) => c.notNull().references('categories.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('article_categories_pk', ['article_id', 'category_id'])
    .execute();
  await db.schema.createIndex('article_categories_category_idx').on('article_categories').column('category_id').execute();

  await createArticleSearch(db, dialect);
  await createArticleCounts(db, dialect);
}

/**
 * The number of articles of each publication, kept by triggers: every page answers with its total, and counting
 * a large publication's index entries on each request would cost more than the page itself.
 */
async function createArticleCounts(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('article_counts')
    .addColumn('publication_id', 'integer', (c) => c.primaryKey().references('publications.id').onDelete('cascade'))
    .addColumn('total', 'integer', (c) => c.notNull())
    .execute();
  if (dialect === 'postgres') {
    await sql`create function articles_count_change() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into article_counts (publication_id, total) values (new.publication_id, 1)
            on conflict (publication_id) do update set total = article_counts.total + 1;
        else
          update article_counts set total = total - 1 where publication_id = old.publication_id;
        end if;
        return null;
      end $$`.execute(db);
    await sql`create trigger articles_count after insert or delete on articles
      for each row execute function articles_count_change()`.execute(db);
    return;
  }
  await sql`create trigger articles_count_insert after insert on articles begin
    insert into article_counts (publication_id, total) values (new.publication_id, 1)
      on conflict (publication_id) do update set total = total + 1;
  end`.execute(db);
  await sql`create trigger articles_count_delete after delete on articles begin
    update article_counts set total = total - 1 where publication_id = old.publication_id;
  end`.execute(db);
}

/** Full-text search over title and info: an FTS5 index kept by triggers (SQLite), a GIN expression index (PostgreSQL). */
async function createArticleSearch(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') {
    await sql`create index articles_search_idx on articles
      using gin (to_tsvector('simple', regexp_replace(coalesce(title, '') || ' ' || coalesce(info, ''), '[[:punct:]]+', ' ', 'g')))`.execute(db);
    return;
  }
  await sql`create virtual table articles_fts using fts5(
    title, info, content='articles', content_rowid='id', tokenize='unicode61 remove_diacritics 2')`.execute(db);
  await sql`create trigger articles_fts_insert after insert on articles begin
    insert into articles_fts(rowid, title, info) values (new.id, new.title, coalesce(new.info, ''));
  end`.execute(db);
  await sql`create trigger articles_fts_delete after delete on articles begin
    insert into articles_fts(articles_fts, rowid, title, info) values ('delete', old.id, old.title, coalesce(old.info, ''));
  end`.execute(db);
  await sql`create trigger articles_fts_update after update of title, info on articles begin
    insert into articles_fts(articles_fts, rowid, title, info) values ('delete', old.id, old.title, coalesce(old.info, ''));
    insert into articles_fts(rowid, title, info) values (new.id, new.title, coalesce(new.info, ''));
  end`.execute(db);
}
