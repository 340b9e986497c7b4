// The only reader of process.env: every setting is parsed and validated here, once, at start.

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string | undefined;
  /** host:port pairs that outbound fetches may reach although they are private (local test servers). */
  outboundAllow: string[];
  companySiteUrl: string;
  llm: { baseUrl: string | undefined; apiKey: string | undefined; model: string | undefined };
  logLevel: LogLevel;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: parsePort(env.PORT ?? '3000'),
    host: nonEmpty('HOST', env.HOST ?? '127.0.0.1'),
    databaseUrl: parseDatabaseUrl(env.DATABASE_URL ?? './data/masthead.sqlite'),
    redisUrl: optionalUrl('REDIS_URL', env.REDIS_URL, ['redis:', 'rediss:']),
    outboundAllow: parseHostPorts(env.OUTBOUND_ALLOW),
    companySiteUrl: parseCompanySiteUrl(env.COMPANY_SITE_URL ?? 'https://{domain}/'),
    llm: {
      baseUrl: optionalUrl('LLM_BASE_URL', env.LLM_BASE_URL, ['http:', 'https:']),
      apiKey: env.LLM_API_KEY || undefined,
      model: env.LLM_MODEL || undefined,
    },
    logLevel: parseLogLevel(env.LOG_LEVEL ?? 'info'),
  };
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
