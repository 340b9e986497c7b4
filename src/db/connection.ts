import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { isPostgresUrl } from '../config.js';
import type { Database } from './types.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Storage {
  db: Kysely<Database>;
  dialect: Dialect;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

export function openStorage(databaseUrl: string): Storage {
  const dialect: Dialect = isPostgresUrl(databaseUrl) ? 'postgres' : 'sqlite';
  const db = dialect === 'postgres' ? openPostgres(databaseUrl) : openSqlite(databaseUrl);
  return {
    db,
    dialect,
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}

function openSqlite(path: string): Kysely<Database> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SQLite(path);
  database.pragma('journal_mode = WAL');
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

function openPostgres(connectionString: string): Kysely<Database> {
  // COUNT(*) and SUM() come back as int8/numeric; every such value here fits a JS number.
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID || oid === NUMERIC_OID
        ? (value: string) => Number(value)
        : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({ connectionString, types, max: 10 });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
