import { type Static, Type } from '@sinclair/typebox';
import { Id, Nullable } from '../../http/schemas.js';

export const MAX_FEED_URL_LENGTH = 2048;

export const RssFeed = Type.Object(
  {
    id: Type.Integer(),
    publication_id: Type.Integer(),
    url: Type.String({
      description:
        'external blog URL articles are imported from: the feed itself (a page given on create is replaced by the feed it leads to), normalized (scheme and host lower-cased, default port and fragment dropped)',
    }),
    title: Type.String(),
    description: Nullable(Type.String()),
    cover: Nullable(Type.String({ description: 'cover URL' })),
    active: Type.Boolean({ description: 'synchronized in the background; set false by Masthead after 10 failed synchronizations in a row' }),
    job_id: Nullable(Type.String({ description: 'identifier (uuid) of the latest synchronization' })),
    job_status: Type.Union([Type.Literal('pending'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')], {
      description: 'pending: waiting for its first import or a queued synchronize; running; completed or failed: the latest run',
    }),
    last_error: Nullable(Type.String({ description: 'why the latest synchronization failed' })),
    import_source: Type.Boolean(),
    import_author: Type.Boolean(),
    auto_publish: Type.Boolean(),
    show_related_articles: Type.Boolean(),
    imported_at: Nullable(Type.String({ description: 'last successful synchronization, YYYY-MM-DD HH:MM:SS UTC' })),
    created_at: Type.String(),
    updated_at: Type.String(),
    category_ids: Type.Array(Type.Integer()),
  },
  { $id: 'RssFeed' },
);
export type RssFeedView = Static<typeof RssFeed>;

const Title = Type.String({ minLength: 1, maxLength: 500, pattern: '\\S' });
const Description = Nullable(Type.String({ maxLength: 10_000 }));
const Cover = Nullable(Type.String({ maxLength: MAX_FEED_URL_LENGTH }));
const CategoryIds = Type.Array(Id, { maxItems: 100, uniqueItems: true });

/** What a feed's owner may set, on create and on update. */
const feedSettings = {
  title: Type.Optional(Title),
  description: Type.Optional(Description),
  cover: Type.Optional(Cover),
  active: Type.Optional(Type.Boolean()),
  import_source: Type.Optional(Type.Boolean()),
  import_author: Type.Optional(Type.Boolean()),
  auto_publish: Type.Optional(Type.Boolean()),
  show_related_articles: Type.Optional(Type.Boolean()),
  category_ids: Type.Optional(CategoryIds),
};

export const RssFeedCreateBody = Type.Object({
  url: Type.String({
    minLength: 1,
    maxLength: MAX_FEED_URL_LENGTH,
    description:
      'http or https URL of the feed, or of a page naming it. A publication takes a feed once: a URL one of its feeds has (compared normalized), or a page or a permanent redirect leading to one, is a 409 conflict',
  }),
  ...feedSettings,
});
export type RssFeedCreateInput = Static<typeof RssFeedCreateBody>;

/** As on create, without the URL: a feed's URL changes only by the feed's own permanent redirects. */
export const RssFeedUpdateBody = Type.Object(feedSettings);
export type RssFeedUpdateInput = Static<typeof RssFeedUpdateBody>;

export const SyncResult = Type.Object(
  {
    job_id: Type.String(),
    job_status: Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('failed')], {
      description: 'pending: queued for the scheduler (202, Prefer: respond-async); completed or failed: the outcome of a run',
    }),
    imported: Type.Integer({ description: 'entries imported as new articles' }),
    updated: Type.Integer({ description: 'articles updated from changed entries' }),
    skipped: Type.Integer({ description: 'changed entries whose article a person edited since, and entries with neither title nor content' }),
    unchanged: Type.Integer({ description: 'entries already imported as they are' }),
    failed: Type.Integer(),
    not_modified: Type.Boolean({ description: 'the server answered 304 Not Modified' }),
    articles: Type.Array(Type.Integer(), { description: 'ids of the articles created or updated' }),
    errors: Type.Array(Type.String()),
  },
  { $id: 'RssFeedSyncResult' },
);
export type SyncResultView = Static<typeof SyncResult>;
