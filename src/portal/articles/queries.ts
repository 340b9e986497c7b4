import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { Dialect } from '../../db/connection.js';
import { executePrepared, preparedQuery } from '../../db/prepared.js';
import type { ArticleChanges, ArticleRow, Database, NewArticle } from '../../db/types.js';
import { PageAnchors } from './page-anchors.js';
import type { ArticleOrderField } from './schemas.js';

export interface ArticleFilter {
  publicationId: number;
  issueId?: number;
  /** Words that must each start a word of the title or info. */
  words?: string[];
}

export interface ArticleOrder {
  field: ArticleOrderField;
  direction: 'asc' | 'desc';
}

export interface CategoryRef {
  id: number;
  name: string;
}

/** Columns that may hold NULL: those sort last either way, the same on both databases. */
const NULLABLE_ORDER_FIELDS = new Set<ArticleOrderField>(['date', 'position']);

type ArticleSelect = SelectQueryBuilder<Database, 'articles', object>;

/** Pages before this offset are found by walking the index: a few hundred microseconds at most. */
const ANCHOR_MIN_OFFSET = 1_000;

/** Every column of an article (PostgreSQL also stores the search words, migration 013, which reads never need). */
const ARTICLE_COLUMNS = [
  'articles.id',
  'articles.publication_id',
  'articles.title',
  'articles.info',
  'articles.html',
  'articles.assets',
  'articles.cover',
  'articles.date',
  'articles.unlock_type',
  'articles.issue_id',
  'articles.position',
  'articles.visible',
  'articles.rss_feed_id',
  'articles.source',
  'articles.author_id',
  'articles.created_at',
  'articles.updated_at',
] as const;

/** An article with its categories, by id, read in one query. */
export type ArticleWithCategories = ArticleRow & { categories: CategoryRef[] };

export class ArticleQueries {
  private readonly findPrepared;
  private readonly anchors = new PageAnchors();
  /** Articles this instance inserted in bulk since its last VACUUM and ANALYZE (see refreshStatistics). */
  private readonly ownInserts = { sinceVacuum: 0, sinceAnalyze: 0 };
  /** The article's categories as JSON `[[id, name], ...]` by id, a column of the same query (one round trip). */
  private readonly categoryList;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {
    this.categoryList =
      dialect === 'postgres'
        ? sql<[number, string][] | string>`coalesce((select json_agg(json_build_array(c.id, c.name) order by c.id)
            from article_categories ac join categories c on c.id = ac.category_id where ac.article_id = articles.id), '[]'::json)`
        : sql<[number, string][] | string>`(select json_group_array(json_array(id, name)) from (select c.id, c.name
            from article_categories ac join categories c on c.id = ac.category_id where ac.article_id = articles.id order by c.id))`;
    this.findPrepared = preparedQuery(db, 2, (publicationId: number, id: number) =>
      db
        .selectFrom('articles')
        .select([...ARTICLE_COLUMNS, this.categoryList.as('category_list')])
        .where('id', '=', id)
        .where('publication_id', '=', publicationId),
    );
  }

  /** Runs `work` in one transaction: every write it makes through the ArticleQueries it is given is kept, or none. */
  transaction<T>(work: (queries: ArticleQueries) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => work(new ArticleQueries(trx, this.dialect)));
  }

  /** Inserts the article with its categories (in a transaction: run it in one); returns its id. */
  insert(values: NewArticle, categoryIds: number[]): Promise<number> {
    return insertArticle(this.db, values, categoryIds);
  }

  /** Changes the article, and its categories unless `categoryIds` is undefined (in a transaction: run it in one). */
  update(id: number, changes: ArticleChanges, categoryIds: number[] | undefined): Promise<void> {
    return updateArticle(this.db, id, changes, categoryIds);
  }

  delete(publicationId: number, id: number): Promise<boolean> {
    return deleteArticle(this.db, publicationId, id);
  }

  async find(publicationId: number, id: number): Promise<ArticleWithCategories | undefined> {
    const [row] = await this.findPrepared(publicationId, id);
    return row && withCategories(row);
  }

  /**
   * After `added` articles were inserted at once, on PostgreSQL: VACUUM the articles once 1,000 were inserted since
   * the last vacuum, so that a deep page skips its offset on the index alone (rows not yet marked all-visible cost a
   * heap visit each: 6,000 of them made a page at offset 40,000 take 22 ms instead of 5); and ANALYZE them once the
   * rows changed since the last analysis reach autovacuum's threshold (10% of the table, and 50), so that the planner
   * is not blind to the new rows. Both now, rather than at autovacuum's next round (or never, where it is off, as on
   * our test server). Vacuum only visits pages changed since the last one; SKIP_LOCKED leaves the work to one already
   * running. The statistics views count every instance's writes but lag by a second or more, so this instance's own
   * inserts since its last upkeep are counted here too, and the larger count decides. Never fails: the articles are
   * in, and upkeep that could not run now is left to the next import or to autovacuum.
   */
  async refreshStatistics(added: number): Promise<void> {
    if (this.dialect !== 'postgres') return;
    this.ownInserts.sinceVacuum += added;
    this.ownInserts.sinceAnalyze += added;
    try {
      const counted = await sql<{ changed: number; inserted: number; rows: number }>`select coalesce(s.n_mod_since_analyze, 0) as changed,
          coalesce(s.n_ins_since_vacuum, 0) as inserted, greatest(c.reltuples, 0) as rows
        from pg_class c left join pg_stat_user_tables s on s.relid = c.oid where c.oid = 'articles'::regclass`.execute(this.db);
      const { changed = 0, inserted = 0, rows = 0 } = counted.rows[0] ?? {};
      const analyze = Math.max(Number(changed), this.ownInserts.sinceAnalyze) >= 0.1 * Number(rows) + 50;
      if (Math.max(Number(inserted), this.ownInserts.sinceVacuum) >= 1_000) {
        await (analyze ? sql`vacuum (analyze, skip_locked) articles` : sql`vacuum (skip_locked) articles`).execute(this.db);
        this.ownInserts.sinceVacuum = 0;
      } else if (analyze) {
        await sql`analyze (skip_locked) articles`.execute(this.db);
      }
      if (analyze) this.ownInserts.sinceAnalyze = 0;
    } catch {
      // See above.
    }
  }

  async count(filter: ArticleFilter): Promise<number> {
    if (filter.issueId === undefined && !filter.words?.length) {
      const [counted] = await executePrepared(
        this.db,
        this.db.selectFrom('article_counts').select('total').where('publication_id', '=', filter.publicationId),
      );
      return counted?.total ?? 0;
    }
    const row = await this.filtered(filter)
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  /**
   * The ids of one window of articles, in order, each with the bytes of its large columns (html, info, assets), read
   * from the stored lengths without reading the values, so that a caller can bound what it reads (then rows()). The
   * ids are found on the narrow indexes, so a deep offset skips index entries rather than whole articles.
   */
  async windowIds(filter: ArticleFilter, order: ArticleOrder, limit: number, offset: number): Promise<{ id: number; bytes: number }[]> {
    let ids = this.filtered(filter).select('articles.id');
    let skip = offset;
    // A deep page of the plain list starts from the nearest page start this process saw at the list's version.
    const anchored = offset >= ANCHOR_MIN_OFFSET && filter.issueId === undefined && !filter.words?.length && order.field === 'id';
    const list = `${filter.publicationId}:${order.direction}`;
    const version = anchored ? await this.listVersion(filter.publicationId) : '';
    const anchor = anchored ? this.anchors.nearest(list, version, offset) : undefined;
    if (anchor) {
      ids = ids.where('articles.id', order.direction === 'desc' ? '<=' : '>=', anchor.id);
      skip = offset - anchor.offset;
    }
    // The window is found on the narrow indexes alone (an index-only scan skipping `skip` entries); only its own
    // rows are then read for their sizes, in the same order.
    const window = ordered(ids, order).limit(limit).offset(skip);
    const query = ordered(
      this.db
        .selectFrom('articles')
        .select([
          'articles.id',
          sql<number>`coalesce(octet_length(articles.html), 0) + coalesce(octet_length(articles.info), 0) + coalesce(octet_length(articles.assets), 0)`.as(
            'bytes',
          ),
        ])
        .where('articles.id', 'in', window),
      order,
    );
    // Without words the plan is the same for any values (the narrow index, in order): prepared on PostgreSQL. A
    // search's best plan depends on how many articles the words match, so it is planned for its own values.
    const rows = filter.words?.length ? await query.execute() : await executePrepared(this.db, query);
    if (anchored && rows[0]) this.anchors.remember(list, version, { offset, id: rows[0].id });
    return rows.map((row) => ({ id: row.id, bytes: Number(row.bytes) }));
  }

  /** The plain list's version (see PageAnchors): how many articles the publication has, and its highest id. */
  private async listVersion(publicationId: number): Promise<string> {
    const [row] = await executePrepared(
      this.db,
      this.db
        .selectFrom('article_counts')
        .select([
          'total',
          (eb) =>
            eb
              .selectFrom('articles')
              .select((inner) => inner.fn.max('articles.id').as('last'))
              .where('articles.publication_id', '=', publicationId)
              .as('last'),
        ])
        .where('article_counts.publication_id', '=', publicationId),
    );
    return `${row?.total ?? 0}:${row?.last ?? 0}`;
  }

  /** The articles of these ids, in this order (ids no longer there are left out). */
  async rows(ids: number[]): Promise<ArticleWithCategories[]> {
    if (ids.length === 0) return [];
    const query = this.db.selectFrom('articles').select([...ARTICLE_COLUMNS, this.categoryList.as('category_list')]);
    // On PostgreSQL one array parameter, so that the statement is the same for any number of ids and stays prepared.
    const rows =
      this.dialect === 'postgres'
        ? await executePrepared(this.db, query.where(sql<boolean>`articles.id = any(${ids})`))
        : await query.where('id', 'in', ids).execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [withCategories(row)] : [];
    });
  }

  private filtered(filter: ArticleFilter): ArticleSelect {
    let query: ArticleSelect = this.db.selectFrom('articles').where('articles.publication_id', '=', filter.publicationId);
    if (filter.issueId !== undefined) query = query.where('articles.issue_id', '=', filter.issueId);
    if (filter.words && filter.words.length > 0) query = query.where(this.matches(filter.words));
    return query;
  }

  private matches(words: string[]) {
    if (this.dialect === 'postgres') {
      const tsquery = words.map((word) => `${word}:*`).join(' & ');
      // The stored words of title and info (migration 013): punctuation splits words as SQLite's tokenizer does, so
      // `com` finds "example.com" on both databases, and accents are ignored on both (`cafe` finds "Café").
      return sql<boolean>`articles.search @@ to_tsquery('simple', masthead_unaccent(${tsquery}))`;
    }
    const match = words.map((word) => `"${word}"*`).join(' ');
    return sql<boolean>`articles.id in (select rowid from articles_fts where articles_fts match ${match})`;
  }
}

/** Sorted by the order's field, then by id (the order of equal values), NULLs last either way. */
function ordered<Selection>(query: SelectQueryBuilder<Database, 'articles', Selection>, order: ArticleOrder) {
  return query
    .$call((sorted) =>
      NULLABLE_ORDER_FIELDS.has(order.field)
        ? sorted.orderBy(`articles.${order.field}`, (ob) => (order.direction === 'asc' ? ob.asc() : ob.desc()).nullsLast())
        : sorted.orderBy(`articles.${order.field}`, order.direction),
    )
    .$if(order.field !== 'id', (sorted) => sorted.orderBy('articles.id', order.direction));
}

function withCategories({ category_list: list, ...row }: ArticleRow & { category_list: [number, string][] | string }): ArticleWithCategories {
  const pairs = typeof list === 'string' ? (JSON.parse(list) as [number, string][]) : list;
  return { ...row, categories: pairs.map(([id, name]) => ({ id, name })) };
}

/** Writes run inside a transaction, so they take the transaction's handle (ArticleQueries built on it: see transaction). */
async function insertArticle(db: Kysely<Database>, values: NewArticle, categoryIds: number[]): Promise<number> {
  const { id } = await db.insertInto('articles').values(values).returning('id').executeTakeFirstOrThrow();
  await setArticleCategories(db, id, categoryIds);
  return id;
}

async function updateArticle(db: Kysely<Database>, id: number, changes: ArticleChanges, categoryIds: number[] | undefined): Promise<void> {
  await db.updateTable('articles').set(changes).where('id', '=', id).execute();
  if (categoryIds !== undefined) {
    await db.deleteFrom('article_categories').where('article_id', '=', id).execute();
    await setArticleCategories(db, id, categoryIds);
  }
}

async function setArticleCategories(db: Kysely<Database>, articleId: number, categoryIds: number[]): Promise<void> {
  if (categoryIds.length === 0) return;
  await db
    .insertInto('article_categories')
    .values(categoryIds.map((categoryId) => ({ article_id: articleId, category_id: categoryId })))
    .execute();
}

async function deleteArticle(db: Kysely<Database>, publicationId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('articles').where('id', '=', id).where('publication_id', '=', publicationId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
