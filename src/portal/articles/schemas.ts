import { type Static, Type } from '@sinclair/typebox';
import { Id, MAX_INT, Nullable, OrderDir, PageEnvelope, PerPage } from '../../http/schemas.js';

export const UNLOCK_TYPES = ['free', 'paid', 'subscription'] as const;
export const ARTICLE_ORDER_FIELDS = ['id', 'title', 'date', 'position', 'created_at', 'updated_at'] as const;
export const MAX_IMPORT = 500;

const Title = Type.String({ minLength: 1, maxLength: 500, pattern: '\\S' });
const Info = Nullable(Type.String({ maxLength: 10_000, description: 'article description (plain text)' }));
const Html = Nullable(Type.String({ maxLength: 1_000_000, description: 'article HTML; sanitized on save' }));
const DateInput = Nullable(Type.String({ maxLength: 40, description: 'YYYY-MM-DD, YYYY-MM-DD HH:MM:SS or ISO 8601; stored in UTC' }));
const Cover = Nullable(Type.String({ maxLength: 2048, description: 'cover image URL (http, https or relative)' }));
const CategoryIds = Type.Array(Id, { maxItems: 100, uniqueItems: true, description: 'categories of this publication' });
const IssueId = Nullable(Id);
const UnlockType = Type.Union(
  UNLOCK_TYPES.map((value) => Type.Literal(value)),
  { description: 'free, paid or subscription' },
);
const Position = Nullable(Type.Integer({ minimum: 0, maximum: MAX_INT }));
const Source = Nullable(Type.String({ maxLength: 64, description: 'article type, e.g. flexpdf or rss' }));
const Assets = Nullable(Type.Object({}, { additionalProperties: true, description: 'a JSON object of assets' }));

export const Article = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    info: Nullable(Type.String()),
    html: Nullable(Type.String()),
    assets: Nullable(Type.Object({}, { additionalProperties: true })),
    cover: Nullable(Type.String()),
    date: Nullable(Type.String({ description: 'publish date, YYYY-MM-DD HH:MM:SS UTC' })),
    unlock_type: Type.String(),
    categories: Type.Array(Type.String()),
    category_ids: Type.Array(Type.Integer()),
    publication_id: Nullable(Type.Integer()),
    issue_id: Nullable(Type.Integer()),
    position: Nullable(Type.Integer()),
    visible: Type.Boolean(),
    rss_feed_id: Nullable(Type.Integer()),
    source: Nullable(Type.String()),
    author_id: Nullable(Type.Integer({ description: 'the user who created the article' })),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { $id: 'Article' },
);
export type ArticleView = Static<typeof Article>;

export const ArticleCreate = Type.Object({
  title: Title,
  info: Type.Optional(Info),
  html: Type.Optional(Html),
  date: Type.Optional(DateInput),
  cover: Type.Optional(Cover),
  category_ids: Type.Optional(CategoryIds),
  issue_id: Type.Optional(IssueId),
  unlock_type: Type.Optional(UnlockType),
  position: Type.Optional(Position),
  source: Type.Optional(Source),
});
export type ArticleCreateInput = Static<typeof ArticleCreate>;

export const ArticleUpdate = Type.Object({
  title: Type.Optional(Title),
  info: Type.Optional(Info),
  html: Type.Optional(Html),
  assets: Type.Optional(Assets),
  date: Type.Optional(DateInput),
  cover: Type.Optional(Cover),
  category_ids: Type.Optional(CategoryIds),
  issue_id: Type.Optional(IssueId),
  unlock_type: Type.Optional(UnlockType),
  position: Type.Optional(Position),
  visible: Type.Optional(Type.Boolean()),
});
export type ArticleUpdateInput = Static<typeof ArticleUpdate>;

/**
 * An import entry is an article: the create body's own fields (the same definitions, so the two cannot drift). A
 * field neither declares is ignored, as everywhere; a declared one of the wrong type is a 400 naming its entry.
 */
export const FlexPdfArticle = Type.Object({ ...ArticleCreate.properties });
export type FlexPdfArticleInput = ArticleCreateInput;

export const FlexPdfImport = Type.Object({
  articles: Type.Array(FlexPdfArticle, { minItems: 1, maxItems: MAX_IMPORT }),
});

export const FlexPdfImportResult = Type.Object({
  articles: Type.Array(Type.Ref(Article)),
  count: Type.Integer(),
});

const OrderBy = Type.Union(
  ARTICLE_ORDER_FIELDS.map((field) => Type.Literal(field)),
  { default: 'id', description: `one of ${ARTICLE_ORDER_FIELDS.join(', ')}` },
);
export type ArticleOrderField = (typeof ARTICLE_ORDER_FIELDS)[number];

export const ArticleListQuery = Type.Object({
  order_by: Type.Optional(OrderBy),
  order_dir: Type.Optional(OrderDir),
  issue_id: Type.Optional(Id),
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_INT,
      description: 'skip this many articles (the Link header of a list cut short names the next offset)',
    }),
  ),
});
export type ArticleListOptions = Static<typeof ArticleListQuery>;

export const ArticlePageQuery = Type.Object({
  per_page: Type.Optional(PerPage),
  order_by: Type.Optional(OrderBy),
  order_dir: Type.Optional(OrderDir),
  filter: Type.Optional(Type.String({ maxLength: 200, description: 'words to find in title and info' })),
  issue_id: Type.Optional(Id),
});
export type ArticlePageOptions = Static<typeof ArticlePageQuery>;

export const ArticlePage = PageEnvelope(Type.Ref(Article));
