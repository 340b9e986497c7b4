import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { idColumn } from './columns.js';

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('rss_feeds')
    .addColumn('id', idColumn(dialect), (c) => c.primaryKey())
    .addColumn('publication_id', 'integer', (c) => c.notNull().references('publications.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('cover', 'text')
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('job_id', 'text')
    // pending (never run or queued), running, completed, failed
    .addColumn('job_status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('job_started_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('import_source', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('import_author', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('auto_publish', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('show_related_articles', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('etag', 'text')
    .addColumn('last_modified', 'text')
    .addColumn('imported_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rss_feeds_publication_idx').on('rss_feeds').columns(['publication_id', 'id']).execute();

  await db.schema
    .createTable('rss_feed_categories')
    .addColumn('feed_id', 'integer', (c) => c.notNull().references('rss_feeds.id').onDelete('cascade'))
    .addColumn('category_id', 'integer', (c) => c.notNull().references('categories.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('rss_feed_categories_pk', ['feed_id', 'category_id'])
    .execute();

  // One article per (feed, entry key). synced_at is the article's updated_at as the importer wrote it: an article
  // whose updated_at is later was edited by a person since, and the importer leaves it alone.
  await db.schema
    .createTable('feed_entries')
    .addColumn('id', idColumn(dialect), (c) => c.primaryKey())
    .addColumn('feed_id', 'integer', (c) => c.notNull().references('rss_feeds.id').onDelete('cascade'))
    .addColumn('entry_key', 'text', (c) => c.notNull())
    // A person who deletes an imported article wants it gone: the entry stays known (article_id null), so the
    // next synchronize does not bring it back.
    .addColumn('article_id', 'integer', (c) => c.references('articles.id').onDelete('set null'))
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('synced_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('feed_entries_feed_key_unique', ['feed_id', 'entry_key'])
    .execute();
  await db.schema.createIndex('feed_entries_article_idx').on('feed_entries').column('article_id').execute();
  await db.schema.createIndex('articles_rss_feed_idx').on('articles').column('rss_feed_id').execute();
}
