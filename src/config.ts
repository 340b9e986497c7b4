// The only reader of process.env: every setting is parsed and validated here, once, at start.

import ipaddr from 'ipaddr.js';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  /** The PostgreSQL connection pool (unused on SQLite). */
  postgresPool: PostgresPoolSettings;
  redisUrl: string | undefined;
  /** host:port pairs that outbound fetches may reach although they are private (local test servers). */
  outboundAllow: string[];
  companySiteUrl: string;
  llm: { baseUrl: string | undefined; apiKey: string | undefined; model: string | undefined };
  logLevel: LogLevel;
  /**
   * TRUST_PROXY: which peers' X-Forwarded-For / -Proto / -Host are believed (Fastify's trustProxy): false (the
   * default: the peer is the client), true (any peer), a number of proxy hops, or addresses and CIDR ranges.
   */
  trustProxy: boolean | number | string[];
  /** ALLOW_SIGNUP: whether the dashboard's sign-up page creates accounts (off: only `masthead account create` does). */
  allowSignup: boolean;
  leads: LeadSettings;
  /** Where the dashboard's "send it to me" delivers generated emails; unset: the option is not offered. */
  smtpUrl: string | undefined;
  mailFrom: string;
  feeds: FeedSettings;
  http: HttpSettings;
  metrics: MetricsSettings;
  webhooks: WebhookSettings;
}

export interface WebhookSettings {
  /** WEBHOOK_WORKER: send queued webhook deliveries from this process. */
  worker: boolean;
  /** WEBHOOK_WORKER_POLL_MS: how often the worker looks for due deliveries (deliveries queued here are sent at once). */
  pollMs: number;
  /** WEBHOOK_DISABLE_AFTER_DAYS: an endpoint whose attempts have all failed this long is disabled. */
  disableAfterDays: number;
}

export interface MetricsSettings {
  /** METRICS: serve GET /metrics (Prometheus text format); off, it is a 404 like any unknown route. */
  enabled: boolean;
  /** METRICS_TOKEN: when set, /metrics requires `Authorization: Bearer TOKEN`. */
  token: string | undefined;
}

/** A shorter token is more likely a placeholder than a secret. */
const MIN_METRICS_TOKEN_LENGTH = 16;

/**
 * How long the server waits for a client (Node's http server: headersTimeout, requestTimeout, keepAliveTimeout), so
 * that a client that stalls cannot hold a connection open: like nginx's client_header_timeout, client_body_timeout
 * and keepalive_timeout. A request once received has no limit here: the handler's own work bounds it.
 */
export interface HttpSettings {
  /** HTTP_HEADERS_TIMEOUT_SECONDS: from the connection (or the request's first byte) until its headers are in. */
  headersTimeoutSeconds: number;
  /** HTTP_REQUEST_TIMEOUT_SECONDS: until the whole request, headers and body, is in (at least the headers' time). */
  requestTimeoutSeconds: number;
  /** HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: how long an idle keep-alive connection waits for its next request. */
  keepAliveTimeoutSeconds: number;
}

/** An hour: a longer wait for a client is more likely milliseconds written for seconds than a wish. */
const MAX_HTTP_TIMEOUT_SECONDS = 3600;

export interface PostgresPoolSettings {
  /** DATABASE_POOL_SIZE: connections this instance keeps at most (several instances share the server's max_connections). */
  size: number;
  /** DATABASE_CONNECT_TIMEOUT_MS: how long a query waits for a connection (a free one, or a new one) before failing with a 503. */
  connectTimeoutMs: number;
  /** DATABASE_IDLE_TIMEOUT_MS: an idle connection is closed after this long. */
  idleTimeoutMs: number;
  /** DATABASE_APPLICATION_NAME: how the connections name themselves in pg_stat_activity (unless the URL names one). */
  applicationName: string;
  /** DATABASE_STATEMENT_TIMEOUT_MS: the server cancels a statement running longer (503); 0 for no limit. Not for migrations. */
  statementTimeoutMs: number;
}

export interface FeedSettings {
  /** FEED_SCHEDULER: synchronize due feeds (and run queued synchronizations) in this process. */
  scheduler: boolean;
  /** FEED_SYNC_INTERVAL_MINUTES: how often an active feed is synchronized (sooner if it posts often). */
  syncIntervalMinutes: number;
}

/** A week: a longer interval is more likely a typo (seconds for minutes) than a wish. */
const MAX_FEED_SYNC_INTERVAL_MINUTES = 7 * 24 * 60;

export type PlanName = 'free' | 'pro' | 'business';
export const PLAN_NAMES: readonly PlanName[] = ['free', 'pro', 'business'];

export interface PlanLimits {
  /** Requests a minute to the lead API, per account. */
  requestsPerMinute: number;
  /** Leads (those that pass the business-email check) per calendar month (UTC), per account. */
  monthlyLeads: number;
  /** Leads of one account researched and generated at once by one instance; the others wait their turn. */
  concurrentLeads: number;
}

export interface LeadSettings {
  plans: Record<PlanName, PlanLimits>;
  /** Reject addresses whose domain has no MX (nor A) record. */
  checkMx: boolean;
  /** How long a company's research is reused (a fallback to the domain alone is kept for an hour at most). */
  companyCacheTtlHours: number;
  /** Prefix of every key Masthead writes to Redis, so that several deployments can share one. */
  redisKeyPrefix: string;
  /** Run queued (Prefer: respond-async) jobs in this process. */
  worker: boolean;
  workerPollMs: number;
}

const PLAN_DEFAULTS: Record<PlanName, PlanLimits> = {
  free: { requestsPerMinute: 10, monthlyLeads: 100, concurrentLeads: 5 },
  pro: { requestsPerMinute: 120, monthlyLeads: 5_000, concurrentLeads: 50 },
  business: { requestsPerMinute: 600, monthlyLeads: 50_000, concurrentLeads: 200 },
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: parsePort(env.PORT ?? '3000'),
    host: nonEmpty('HOST', env.HOST ?? '127.0.0.1'),
    databaseUrl: parseDatabaseUrl(env.DATABASE_URL ?? './data/masthead.sqlite'),
    postgresPool: {
      size: positiveInteger('DATABASE_POOL_SIZE', env.DATABASE_POOL_SIZE, 10),
      connectTimeoutMs: positiveInteger('DATABASE_CONNECT_TIMEOUT_MS', env.DATABASE_CONNECT_TIMEOUT_MS, 5_000),
      idleTimeoutMs: positiveInteger('DATABASE_IDLE_TIMEOUT_MS', env.DATABASE_IDLE_TIMEOUT_MS, 30_000),
      applicationName: nonEmpty('DATABASE_APPLICATION_NAME', env.DATABASE_APPLICATION_NAME ?? 'masthead'),
      statementTimeoutMs: nonNegativeInteger('DATABASE_STATEMENT_TIMEOUT_MS', env.DATABASE_STATEMENT_TIMEOUT_MS, 30_000),
    },
    redisUrl: optionalUrl('REDIS_URL', env.REDIS_URL, ['redis:', 'rediss:']),
    outboundAllow: parseHostPorts(env.OUTBOUND_ALLOW),
    companySiteUrl: parseCompanySiteUrl(env.COMPANY_SITE_URL ?? 'https://{domain}/'),
    llm: {
      baseUrl: optionalUrl('LLM_BASE_URL', env.LLM_BASE_URL, ['http:', 'https:']),
      apiKey: env.LLM_API_KEY || undefined,
      model: env.LLM_MODEL || undefined,
    },
    logLevel: parseLogLevel(env.LOG_LEVEL ?? 'info'),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    allowSignup: parseBoolean('ALLOW_SIGNUP', env.ALLOW_SIGNUP, true),
    smtpUrl: optionalUrl('SMTP_URL', env.SMTP_URL, ['smtp:', 'smtps:']),
    mailFrom: nonEmpty('MAIL_FROM', env.MAIL_FROM ?? 'Masthead <masthead@localhost>'),
    leads: {
      plans: Object.fromEntries(
        PLAN_NAMES.map((plan) => {
          const upper = plan.toUpperCase();
          const defaults = PLAN_DEFAULTS[plan];
          return [
            plan,
            {
              requestsPerMinute: positiveInteger(`PLAN_${upper}_RPM`, env[`PLAN_${upper}_RPM`], defaults.requestsPerMinute),
              monthlyLeads: positiveInteger(`PLAN_${upper}_MONTHLY_LEADS`, env[`PLAN_${upper}_MONTHLY_LEADS`], defaults.monthlyLeads),
              concurrentLeads: positiveInteger(`PLAN_${upper}_CONCURRENCY`, env[`PLAN_${upper}_CONCURRENCY`], defaults.concurrentLeads),
            },
          ];
        }),
      ) as Record<PlanName, PlanLimits>,
      checkMx: parseBoolean('CHECK_MX', env.CHECK_MX, false),
      companyCacheTtlHours: positiveInteger('COMPANY_CACHE_TTL_HOURS', env.COMPANY_CACHE_TTL_HOURS, 168),
      redisKeyPrefix: env.REDIS_KEY_PREFIX ?? 'masthead:',
      worker: parseBoolean('LEAD_WORKER', env.LEAD_WORKER, true),
      workerPollMs: positiveInteger('LEAD_WORKER_POLL_MS', env.LEAD_WORKER_POLL_MS, 1000),
    },
    feeds: {
      scheduler: parseBoolean('FEED_SCHEDULER', env.FEED_SCHEDULER, true),
      syncIntervalMinutes: parseFeedSyncInterval(env.FEED_SYNC_INTERVAL_MINUTES),
    },
    http: parseHttpSettings(env),
    metrics: {
      enabled: parseBoolean('METRICS', env.METRICS, false),
      token: parseMetricsToken(env.METRICS_TOKEN),
    },
    webhooks: {
      worker: parseBoolean('WEBHOOK_WORKER', env.WEBHOOK_WORKER, true),
      pollMs: positiveInteger('WEBHOOK_WORKER_POLL_MS', env.WEBHOOK_WORKER_POLL_MS, 1000),
      disableAfterDays: positiveInteger('WEBHOOK_DISABLE_AFTER_DAYS', env.WEBHOOK_DISABLE_AFTER_DAYS, 5),
    },
  };
}

function parseMetricsToken(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  // Printable ASCII without spaces: what an Authorization header can carry as it is.
  if (!/^[\x21-\x7e]+$/.test(value)) throw new ConfigError('METRICS_TOKEN must be printable ASCII without spaces');
  if (value.length < MIN_METRICS_TOKEN_LENGTH) {
    throw new ConfigError(`METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`);
  }
  return value;
}

function parseHttpSettings(env: NodeJS.ProcessEnv): HttpSettings {
  const seconds = (name: string, fallback: number) => {
    const value = positiveInteger(name, env[name], fallback);
    if (value > MAX_HTTP_TIMEOUT_SECONDS) {
      throw new ConfigError(`${name} must be at most ${MAX_HTTP_TIMEOUT_SECONDS} (an hour, in seconds), got "${env[name]}"`);
    }
    return value;
  };
  const requestTimeoutSeconds = seconds('HTTP_REQUEST_TIMEOUT_SECONDS', 60);
  const settings: HttpSettings = {
    // The whole request includes its headers: their wait is at most the request's (Node refuses a longer one).
    headersTimeoutSeconds: seconds('HTTP_HEADERS_TIMEOUT_SECONDS', Math.min(60, requestTimeoutSeconds)),
    requestTimeoutSeconds,
    keepAliveTimeoutSeconds: seconds('HTTP_KEEP_ALIVE_TIMEOUT_SECONDS', 75),
  };
  if (settings.headersTimeoutSeconds > settings.requestTimeoutSeconds) {
    throw new ConfigError(
      `HTTP_HEADERS_TIMEOUT_SECONDS (${settings.headersTimeoutSeconds}) must not be longer than HTTP_REQUEST_TIMEOUT_SECONDS (${settings.requestTimeoutSeconds})`,
    );
  }
  return settings;
}

function positiveInteger(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new ConfigError(`${name} must be a whole number of at least 1, got "${value}"`);
  }
  return Number(value);
}

function nonNegativeInteger(name: string, value: string | undefined, fallback: number): number {
  return value === '0' ? 0 : positiveInteger(name, value, fallback);
}

function parseFeedSyncInterval(value: string | undefined): number {
  const minutes = positiveInteger('FEED_SYNC_INTERVAL_MINUTES', value, 60);
  if (minutes > MAX_FEED_SYNC_INTERVAL_MINUTES) {
    throw new ConfigError(`FEED_SYNC_INTERVAL_MINUTES must be at most ${MAX_FEED_SYNC_INTERVAL_MINUTES} (a week), got "${value}"`);
  }
  return minutes;
}

// proxy-addr's names for ranges, as Express and Fastify accept them.
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function parseTrustProxy(value: string | undefined): boolean | number | string[] {
  const trimmed = value?.trim() ?? '';
  if (trimmed === '' || /^(false|0|off|no)$/i.test(trimmed)) return false;
  if (/^(true|on|yes)$/i.test(trimmed)) return true;
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const entries = trimmed.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (PROXY_RANGE_NAMES.includes(entry)) continue;
    const valid = entry.includes('/') ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry);
    if (!valid) {
      throw new ConfigError(
        `TRUST_PROXY must be true, false, a number of hops, or addresses and CIDR ranges separated by commas; "${entry}" is none of these`,
      );
    }
  }
  return entries;
}

function parseBoolean(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  const normalized = value.trim().toLowerCase();
  if (['true', '1', 'on', 'yes'].includes(normalized)) return true;
  if (['false', '0', 'off', 'no'].includes(normalized)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw new ConfigError(`PORT must be a whole number from 0 to 65535, got "${value}"`);
  }
  return port;
}

function nonEmpty(name: string, value: string): string {
  if (value.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return value.trim();
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

function parseDatabaseUrl(value: string): string {
  const url = nonEmpty('DATABASE_URL', value);
  if (isPostgresUrl(url)) {
    try {
      new URL(url);
    } catch {
      throw new ConfigError('DATABASE_URL is not a valid postgres:// URL');
    }
    return url;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    throw new ConfigError('DATABASE_URL must be a SQLite file path, ":memory:", or a postgres:// URL');
  }
  return url;
}

function optionalUrl(name: string, value: string | undefined, protocols: string[]): string | undefined {
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // The value is not echoed: URLs like REDIS_URL may carry a password.
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${url.protocol}"`);
  }
  return value;
}

function parseHostPorts(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/.exec(entry);
      if (!match || Number(match[2]) > 65535) {
        throw new ConfigError(`OUTBOUND_ALLOW entries must be host:port, got "${entry}"`);
      }
      return entry;
    });
}

function parseCompanySiteUrl(value: string): string {
  if (!value.includes('{domain}')) throw new ConfigError('COMPANY_SITE_URL must contain {domain}');
  optionalUrl('COMPANY_SITE_URL', value.replace('{domain}', 'example.com'), ['http:', 'https:']);
  return value;
}

function parseLogLevel(value: string): LogLevel {
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  }
  return value as LogLevel;
}
