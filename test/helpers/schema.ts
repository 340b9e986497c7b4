// What the migrations are expected to make, written out by hand (not read from src/db/migrate.ts), so that a test
// comparing against them fails when a migration or a table is added, dropped or reordered by mistake.

/** Every migration, in the order they apply. */
export const ALL_MIGRATIONS = [
  '001_initial',
  '002_clients',
  '003_feeds',
  '004_feed_schedule',
  '005_leads',
  '006_feed_entry_keys',
  '007_lead_fixes',
  '008_search_unaccent',
  '009_ids_never_reused',
  '010_feed_url_unique',
  '011_webhooks',
  '013_article_search_column',
  '014_lead_batches',
  '015_postgres_native_types',
];

/** Every table the migrations create. */
export const ALL_TABLES = [
  'accounts',
  'users',
  'api_keys',
  'publications',
  'categories',
  'issues',
  'articles',
  'article_categories',
  'article_counts',
  'roles',
  'audit_log',
  'sign_in_failures',
  'rss_feeds',
  'rss_feed_categories',
  'feed_entries',
  'lead_templates',
  'lead_jobs',
  'company_profiles',
  'idempotency_keys',
  'lead_usage',
  'lead_batches',
  'webhook_endpoints',
  'webhook_deliveries',
  'webhook_attempts',
];
