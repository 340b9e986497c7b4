import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

// Timestamps are ISO 8601 UTC text (`2026-01-31T12:00:00.000Z`) and flags 0/1 numbers to the application, on both
// databases. SQLite stores them so (ISO text sorts as time). PostgreSQL stores timestamptz and boolean (migration
// 015); its pool reads them back in these shapes (connection.ts) and takes ISO text and 1/0 as parameters for them.
// Raw SQL that must name a flag or a timestamp outside a comparison or an assignment uses db/dialect-sql.ts.

export interface AccountTable {
  id: Generated<number>;
  name: string;
  plan: 'free' | 'pro' | 'business';
  sender_name: ColumnType<string | null, string | null | undefined, string | null>;
  sender_offer: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: string;
  updated_at: string;
}

export interface UserTable {
  id: Generated<number>;
  account_id: number;
  email: string;
  firstname: string;
  lastname: string;
  password_hash: string | null;
  /** `owner` holds the whole account; `client` is a sub-user with roles per publication. */
  kind: 'owner' | 'client';
  sign_in_count: ColumnType<number, number | undefined, number>;
  last_seen_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  /** The first characters of the key, shown in listings so a user can tell keys apart. */
  prefix: string;
  /** SHA-256 (hex) of the whole key; the key itself is never stored. */
  key_hash: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  created_at: string;
  kind: ColumnType<ApiKeyKind, ApiKeyKind | undefined, ApiKeyKind>;
  /** For an impersonation key: the owner or admin who became the key's user. */
  impersonator_id: number | null;
}

export type ApiKeyKind = 'api' | 'session' | 'impersonation';

export interface PublicationTable {
  id: Generated<number>;
  account_id: number;
  app_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface CategoryTable {
  id: Generated<number>;
  publication_id: number;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface IssueTable {
  id: Generated<number>;
  publication_id: number;
  name: string;
  date: string | null;
  created_at: string;
  updated_at: string;
}

export interface ArticleTable {
  id: Generated<number>;
  publication_id: number;
  title: string;
  info: string | null;
  html: string | null;
  /** JSON text of a hash. */
  assets: string | null;
  cover: string | null;
  date: string | null;
  unlock_type: string;
  issue_id: number | null;
  position: number | null;
  visible: number;
  rss_feed_id: number | null;
  source: string | null;
  author_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface ArticleCategoryTable {
  article_id: number;
  category_id: number;
}

export interface ArticleCountTable {
  publication_id: number;
  total: number;
}

export interface RoleTable {
  id: Generated<number>;
  user_id: number;
  publication_id: number;
  access_level: 'admin' | 'editor' | 'author' | 'viewer';
  created_at: string;
  updated_at: string;
}

export interface AuditLogTable {
  id: Generated<number>;
  account_id: number;
  actor_id: number | null;
  impersonator_id: number | null;
  action: string;
  target_user_id: number | null;
  ip: string | null;
  /** JSON text. */
  details: string | null;
  created_at: string;
}

export interface SignInFailureTable {
  id: Generated<number>;
  /** `email:...` or `ip:...` */
  scope: string;
  failed_at: string;
}

export type FeedJobStatus = 'pending' | 'running' | 'completed' | 'failed';

export interface RssFeedTable {
  id: Generated<number>;
  publication_id: number;
  url: string;
  /**
   * The URL as compared for duplicates (portal/feeds/feed-url.ts normalizeFeedUrl), unique per publication. Null only for a feed
   * that duplicated an older one of its publication when migration 010 came (kept, deactivated): its runs fail while
   * the older feed exists, and the first run after that one is gone takes the URL over.
   */
  normalized_url: ColumnType<string | null, string | null | undefined, string | null>;
  title: string;
  description: string | null;
  cover: string | null;
  active: number;
  job_id: string | null;
  job_status: FeedJobStatus;
  /** When the current or last run began; a run still 'running' long after this was cut off and may be taken over. */
  job_started_at: string | null;
  last_error: string | null;
  import_source: number;
  import_author: number;
  auto_publish: number;
  show_related_articles: number;
  etag: string | null;
  last_modified: string | null;
  imported_at: string | null;
  created_at: string;
  updated_at: string;
  /** When the scheduler next synchronizes the feed (while active). */
  next_sync_at: ColumnType<string, string | undefined, string>;
  consecutive_failures: ColumnType<number, number | undefined, number>;
  /** The interval (minutes) the feed's posting rate suggested at its last successful parse. */
  sync_interval_minutes: number | null;
  /** Set from a 429/503 Retry-After: nothing fetches the feed before this time. */
  retry_not_before: string | null;
  /** A manual synchronize queued for the scheduler (`Prefer: respond-async`). */
  queued_at: string | null;
  /** What the feed's entries are keyed by first (guid, else link, else hash); steps down only (feeds/dedupe.ts). */
  entry_key_criterion: ColumnType<'guid' | 'link' | 'hash', 'guid' | 'link' | 'hash' | undefined, 'guid' | 'link' | 'hash'>;
}

export interface RssFeedCategoryTable {
  feed_id: number;
  category_id: number;
}

export interface FeedEntryTable {
  id: Generated<number>;
  feed_id: number;
  entry_key: string;
  /** Null once a person deleted the imported article. */
  article_id: number | null;
  content_hash: string;
  /** The article's updated_at as the importer last wrote it. */
  synced_at: string;
  /** The entry's link and the hash of its title and content when last written: found by them if its key changes. */
  entry_link: ColumnType<string | null, string | null | undefined, string | null>;
  entry_hash: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface Database {
  accounts: AccountTable;
  users: UserTable;
  api_keys: ApiKeyTable;
  publications: PublicationTable;
  categories: CategoryTable;
  issues: IssueTable;
  articles: ArticleTable;
  article_categories: ArticleCategoryTable;
  article_counts: ArticleCountTable;
  roles: RoleTable;
  audit_log: AuditLogTable;
  sign_in_failures: SignInFailureTable;
  rss_feeds: RssFeedTable;
  rss_feed_categories: RssFeedCategoryTable;
  feed_entries: FeedEntryTable;
  lead_templates: LeadTemplateTable;
  lead_jobs: LeadJobTable;
  company_profiles: CompanyProfileTable;
  idempotency_keys: IdempotencyKeyTable;
  lead_usage: LeadUsageTable;
  lead_batches: LeadBatchTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
}

export interface LeadTemplateTable {
  id: string;
  account_id: number;
  name: string;
  subject: string;
  body: string;
  is_default: number;
  created_at: string;
  updated_at: string;
}

export type LeadJobStatus = 'pending' | 'scraping' | 'generating' | 'sending' | 'completed' | 'failed' | 'rejected';

export interface LeadJobTable {
  seq: Generated<number>;
  id: string;
  account_id: number;
  user_id: number | null;
  template_id: string | null;
  first_name: string;
  last_name: string;
  email: string;
  domain: string;
  status: LeadJobStatus;
  run_async: number;
  /** Demo flow: where the generated email is delivered (the dashboard's "send it to me"). */
  send_to: string | null;
  error_message: string | null;
  rejection_reason: string | null;
  email_subject: string | null;
  email_body: string | null;
  /** The research profile used, as JSON. */
  company: string | null;
  research_note: string | null;
  generator: string | null;
  lease_until: string | null;
  /** The token of the claim holding the lease (migration 007); a runner's writes are checked against it. */
  lease_owner: ColumnType<string | null, string | null | undefined, string | null>;
  attempts: number;
  created_at: string;
  updated_at: string;
  scraping_at: string | null;
  generating_at: string | null;
  sending_at: string | null;
  completed_at: string | null;
  /** The batch the lead came in, and its place in the batch's list (from 0); null for a lead sent alone (migration 014). */
  batch_id: ColumnType<string | null, string | null | undefined, string | null>;
  batch_position: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface LeadBatchTable {
  id: string;
  account_id: number;
  user_id: number | null;
  template_id: string | null;
  name: string | null;
  total: number;
  accepted: number;
  /** JSON: the leads the quota left out (see migration 014). */
  not_accepted: string;
  created_at: string;
  completed_at: string | null;
}

export interface CompanyProfileTable {
  domain: string;
  profile: string;
  source: 'site' | 'domain';
  fallback_reason: string | null;
  fetched_at: string;
  expires_at: string;
}

export interface IdempotencyKeyTable {
  account_id: number;
  key: string;
  request_hash: string;
  status_code: number | null;
  response: string | null;
  created_at: string;
  expires_at: string;
  /** Last sign of life of the request holding an in-progress key (migration 007). */
  renewed_at: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface LeadUsageTable {
  account_id: number;
  month: string;
  leads: number;
}

export type RoleRow = Selectable<RoleTable>;

export type Account = Selectable<AccountTable>;
export type User = Selectable<UserTable>;
export type Publication = Selectable<PublicationTable>;
export type CategoryRow = Selectable<CategoryTable>;
export type IssueRow = Selectable<IssueTable>;
export type ArticleRow = Selectable<ArticleTable>;
export type NewArticle = Insertable<ArticleTable>;
export type ArticleChanges = Updateable<ArticleTable>;

export type RssFeedRow = Selectable<RssFeedTable>;
export type NewRssFeed = Insertable<RssFeedTable>;

export interface WebhookEndpointTable {
  id: Generated<number>;
  account_id: number;
  url: string;
  description: string | null;
  /** JSON array of the event types it takes. */
  events: string;
  enabled: number;
  /** `whsec_` and the base64 of the key (Standard Webhooks): the receiver verifies with it, so it is kept as is. */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  failing_since: string | null;
  disabled_reason: string | null;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveryTable {
  id: Generated<number>;
  endpoint_id: number;
  account_id: number;
  event_id: string;
  event_type: string;
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  round_attempts: number;
  next_attempt_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_duration_ms: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
}

export interface WebhookAttemptTable {
  id: Generated<number>;
  delivery_id: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  succeeded: number;
}
