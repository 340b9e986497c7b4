// The layer rules of the README's Layout, checked by `npm test` (npm run lint:deps): a rule broken is a red CI.
//
// Layers: infrastructure (config, errors, time, db, http, net, content, infra, reader, workers) knows no domain;
// domains (accounts, portal/*, leads) use infrastructure and only the named parts of each other; the dashboard is a
// user interface over the domains' services; app.ts (the composition root) is imported by cli.ts alone.

/** Shared infrastructure: may be imported by anything, imports no domain. */
const INFRASTRUCTURE = '^src/(config|errors|time)\\.ts$|^src/(db|http|net|content|infra|reader|workers)/';
const DOMAINS = '^src/(accounts|portal|leads|webhooks|dashboard)/';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules form no cycle (a type-only import counts too: it is still an arrow the wrong way).',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'nothing-imports-the-root',
      severity: 'error',
      comment: 'app.ts builds everything; only the CLI (and tests, bench) start it.',
      from: { path: '^src/', pathNot: '^src/cli\\.ts$' },
      to: { path: '^src/app\\.ts$' },
    },
    {
      name: 'infrastructure-knows-no-domain',
      severity: 'error',
      comment:
        "Shared infrastructure is below every domain: an arrow up would tie it to one of them. The worker threads' entry " +
        '(workers/tasks.ts) is their composition root: it may run pure domain code, named in the next rule.',
      from: { path: INFRASTRUCTURE, pathNot: '^src/workers/tasks\\.ts$' },
      to: { path: DOMAINS },
    },
    {
      name: 'worker-tasks-run-only-pure-domain-code',
      severity: 'error',
      comment: 'The worker threads run no I/O of a domain: only the reading of company pages (leads/research, pure).',
      from: { path: '^src/workers/tasks\\.ts$' },
      to: { path: DOMAINS, pathNot: '^src/leads/research/(extract|types)\\.ts$' },
    },
    {
      name: 'services-never-import-fastify',
      severity: 'error',
      comment: 'Services know the rules, not HTTP: routes map their results and errors to statuses.',
      from: {
        path: '(^|/)(service|queries)\\.ts$|^src/leads/(worker|email-check|email-writer|company-directory|account-slots|mailer)\\.ts$|^src/leads/(research|generation|templates|idempotency)/(?!routes)|^src/webhooks/(worker|events|signing)\\.ts$',
      },
      to: { path: '(^|/)node_modules/(fastify|@fastify/)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'only-queries-build-sql',
      severity: 'error',
      comment:
        "Queries know SQL: only */queries.ts and src/db/ import Kysely, even for its types (a service is handed its domain's " +
        'queries class, never a database handle; table row types come from src/db/types.ts).',
      from: { path: '^src/', pathNot: '(^|/)queries\\.ts$|^src/db/' },
      to: { path: '(^|/)node_modules/kysely/' },
    },
    {
      name: 'dashboard-never-reads-rows',
      severity: 'error',
      comment: 'The dashboard shows what services return, never database rows.',
      from: { path: '^src/dashboard/' },
      to: { path: '^src/db/' },
    },
    {
      name: 'portal-and-leads-apart',
      severity: 'error',
      comment: 'The two APIs are separate domains; what both need lives in infrastructure.',
      from: { path: '^src/leads/' },
      to: { path: '^src/(portal|dashboard)/' },
    },
    {
      name: 'leads-apart-from-portal',
      severity: 'error',
      from: { path: '^src/portal/' },
      to: { path: '^src/(leads|dashboard)/' },
    },
    {
      name: 'portal-domains-apart',
      severity: 'error',
      comment:
        'A portal domain imports another only through the named exceptions: publications (whose publication it is, ' +
        "and the caller's access), permissions (the role table), audit (writing the log beside a change), and the feeds' " +
        'queries writing articles (next rule).',
      from: { path: '^src/portal/([^/]+)/' },
      to: {
        path: '^src/portal/([^/]+)/',
        pathNot: ['^src/portal/$1/', '^src/portal/(publications|audit)/', '^src/portal/articles/queries\\.ts$'],
      },
    },
    {
      name: 'only-feed-queries-write-articles',
      severity: 'error',
      comment:
        'Feeds import articles in their own transaction: FeedQueries.transaction hands the import ArticleQueries bound to it. ' +
        "No other part of another portal domain reaches the articles' queries.",
      from: { path: '^src/portal/[^/]+/', pathNot: '^src/portal/articles/|^src/portal/feeds/queries\\.ts$' },
      to: { path: '^src/portal/articles/queries\\.ts$' },
    },
    {
      name: 'domains-never-import-webhooks',
      severity: 'error',
      comment: 'Other domains tell of their events through a listener app.ts passes in (onJobEnded, onFinished); they never import webhooks.',
      from: { path: '^src/(accounts|portal|leads)/' },
      to: { path: '^src/webhooks/' },
    },
    {
      name: 'webhooks-apart',
      severity: 'error',
      comment: 'Webhooks take the lead API rate limit (its routes are under /api/client) and nothing else of another domain.',
      from: { path: '^src/webhooks/' },
      to: { path: '^src/(portal|leads|dashboard)/', pathNot: '^src/leads/rate-limit\\.ts$' },
    },
    {
      name: 'accounts-knows-no-portal-or-leads',
      severity: 'error',
      from: { path: '^src/accounts/' },
      to: { path: '^src/(portal|leads|dashboard)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
