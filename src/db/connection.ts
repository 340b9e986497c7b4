import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { isPostgresUrl, type PostgresPoolSettings } from '../config.js';
import { PREPARED_MARK } from './prepared.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import type { Database } from './types.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Storage {
  db: Kysely<Database>;
  dialect: Dialect;
  /** True when the database answers a trivial query within PING_TIMEOUT_MS. */
  ping(): Promise<boolean>;
  /**
   * Tells `listener` of every connection the database dropped (PostgreSQL restarted, failed over, or a proxy reaped
   * it). The broken connection is already out of the pool; the next query opens a new one.
   */
  onConnectionLost(listener: (error: Error) => void): void;
  /** The PostgreSQL pool's connections now; undefined on SQLite (one connection, used synchronously). */
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Connections open (in use and idle). */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  /** DATABASE_POOL_SIZE. */
  max: number;
}

const PING_TIMEOUT_MS = 2_000;

export const DEFAULT_POSTGRES_POOL: PostgresPoolSettings = {
  size: 10,
  connectTimeoutMs: 5_000,
  idleTimeoutMs: 30_000,
  applicationName: 'masthead',
  statementTimeoutMs: 30_000,
};

const INT8_OID = 20;
const NUMERIC_OID = 1700;
const BOOL_OID = 16;
const TIMESTAMPTZ_OID = 1184;

export function openStorage(databaseUrl: string, poolSettings: PostgresPoolSettings = DEFAULT_POSTGRES_POOL): Storage {
  const dialect: Dialect = isPostgresUrl(databaseUrl) ? 'postgres' : 'sqlite';
  const lostListeners: ((error: Error) => void)[] = [];
  const connectionLost = (error: Error) => {
    for (const listener of lostListeners) listener(error);
  };
  const sqliteFile = dialect === 'sqlite' && databaseUrl !== ':memory:';
  const pool = dialect === 'postgres' ? openPostgresPool(databaseUrl, poolSettings, connectionLost) : undefined;
  const db = pool ? new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }) : openSqlite(databaseUrl, sqliteFile);
  // Started once the file is in WAL mode (a mode the file keeps), so the two connections never race to set it.
  const checkpointer = sqliteFile ? startCheckpointer(databaseUrl) : undefined;
  return {
    db,
    dialect,
    async ping() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
      });
      const answered = sql`select 1`.execute(db).then(
        () => true,
        () => false,
      );
      try {
        return await Promise.race([answered, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    onConnectionLost: (listener) => void lostListeners.push(listener),
    poolStats: () => (pool ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: poolSettings.size } : undefined),
    async close() {
      await db.destroy();
      await checkpointer?.stop();
    },
  };
}

function openSqlite(path: string, checkpointedElsewhere: boolean): Kysely<Database> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SQLite(path);
  database.pragma('journal_mode = WAL');
  // The checkpointer's thread copies the log into the database file, rather than the commit that fills it.
  if (checkpointedElsewhere) database.pragma('wal_autocheckpoint = 0');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  // Reads are served from memory-mapped pages and a 64 MiB page cache rather than a read() per page.
  database.pragma('mmap_size = 1073741824');
  database.pragma('cache_size = -65536');
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely asks better-sqlite3 to prepare (parse and plan) every statement on every query; the same few hundred SQL
 * texts recur, so prepared statements are kept and reused. Statements run synchronously, so one is never in use twice.
 */
function withStatementCache(database: SQLite.Database): SQLite.Database {
  const prepare = database.prepare.bind(database);
  const statements = new Map<string, SQLite.Statement>();
  database.prepare = ((source: string) => {
    let statement = statements.get(source);
    if (!statement) {
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear();
      statement = prepare(source);
      statements.set(source, statement);
    }
    return statement;
  }) as SQLite.Database['prepare'];
  return database;
}

/**
 * Runs the statements of prepared queries (PREPARED_MARK) as named statements: pg parses and plans each once per
 * connection and then only binds and executes it. The names are shared by the pool's connections (one text, one name).
 */
function nameMarkedStatements(client: pg.PoolClient, names: Map<string, string>): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    if (typeof text === 'string' && text.startsWith(PREPARED_MARK) && Array.isArray(values) && callback === undefined) {
      let name = names.get(text);
      if (name === undefined) {
        name = `masthead_${names.size + 1}`;
        names.set(text, name);
      }
      return query({ name, text, values });
    }
    return query(text, values, callback);
  }) as typeof client.query;
}

function openPostgresPool(connectionString: string, settings: PostgresPoolSettings, connectionLost: (error: Error) => void): pg.Pool {
  // COUNT(*) and SUM() come back as int8/numeric; every such value here fits a JS number. Timestamps (timestamptz,
  // migration 015) and flags (boolean) read back as SQLite gives them: ISO 8601 text and 0/1 (see parseTimestamptz).
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
      if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
      if (oid === TIMESTAMPTZ_OID) return parseTimestamptz;
      if (oid === BOOL_OID) return parseBool;
      return pg.types.getTypeParser(oid, format as 'text');
    }) as typeof pg.types.getTypeParser,
  };
  const statementNames = new Map<string, string>();
  const pool = new pg.Pool({
    connectionString,
    types,
    max: settings.size,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    idleTimeoutMillis: settings.idleTimeoutMs,
    // A URL's own ?application_name= wins.
    ...(new URL(connectionString).searchParams.has('application_name') ? {} : { application_name: settings.applicationName }),
    // Sent at connect: the server cancels a statement that runs longer (57014, answered 503). Migrations lift it.
    ...(settings.statementTimeoutMs > 0 ? { statement_timeout: settings.statementTimeoutMs } : {}),
    // A peer that vanished without closing (a failover, a cable) is noticed by TCP keep-alive, not only at the next query.
    keepAlive: true,
  });
  // Without these listeners a dropped connection is an unhandled 'error' event, which ends the process. Every client
  // reports its own loss: in use, the query on it fails and pg-pool discards the client when it is released (it is
  // no longer queryable); idle, pg-pool removes it and also emits on the pool, which is the same loss again.
  pool.on('connect', (client) => {
    client.on('error', connectionLost);
    nameMarkedStatements(client, statementNames);
  });
  pool.on('error', () => undefined);
  return pool;
}

const parseDate = pg.types.getTypeParser(TIMESTAMPTZ_OID) as (value: string) => Date | number;

/** `2026-01-31 12:00:00.123+00` (ISO DateStyle, TimeZone UTC; microseconds optional): read without a Date. */
const UTC_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;

/**
 * A timestamptz as the ISO 8601 text the application has always stored and shown on both databases
 * (`2026-01-31T12:00:00.123Z`, `Date#toISOString`'s form: milliseconds, UTC), whatever the session's TimeZone.
 * Microseconds (never written by Masthead) are cut, as a Date would.
 */
export function parseTimestamptz(value: string): string {
  const utc = UTC_TIMESTAMP.exec(value);
  if (utc) return `${utc[1]}T${utc[2]}.${(utc[3] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
  const date = parseDate(value);
  return date instanceof Date && !Number.isNaN(date.getTime()) ? date.toISOString() : value;
}

/** A boolean as the 0/1 SQLite stores (and the application compares with). */
export function parseBool(value: string): number {
  return value === 't' ? 1 : 0;
}
