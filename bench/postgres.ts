// The databases of the benchmarks. Which PostgreSQL: BENCH_POSTGRES_URL, else the local server CI has
// (postgres://root@127.0.0.1:5432/test) when it answers. An explicit BENCH_POSTGRES_URL that does not answer is an
// error; a missing local server skips the PostgreSQL rows with a note.

import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { ROOT } from './children.js';

const DEFAULT_POSTGRES_URL = 'postgres://root@127.0.0.1:5432/test';

export type BenchPostgres = { url: string } | { url: undefined; note: string };

export async function benchPostgres(): Promise<BenchPostgres> {
  const explicit = process.env.BENCH_POSTGRES_URL;
  const url = explicit || DEFAULT_POSTGRES_URL;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return { url };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (explicit) throw new Error(`BENCH_POSTGRES_URL does not answer: ${reason}`);
    return { url: undefined, note: `PostgreSQL skipped: ${DEFAULT_POSTGRES_URL} does not answer (${reason}); set BENCH_POSTGRES_URL` };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The URL with every connection's search_path set to `schema`. */
export function inSchema(url: string, schema: string): string {
  const withPath = new URL(url);
  withPath.searchParams.set('options', `-c search_path=${schema}`);
  return withPath.toString();
}

/** Runs `work` with one connection of its own. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A database a bench section makes for itself and drops afterwards. */
export interface ScratchDatabase {
  dialect: 'sqlite' | 'postgres';
  url: string;
  drop(): Promise<void>;
}

/**
 * Makers of a fresh database on each side: a SQLite file under .bench/ and, when PostgreSQL answers, a schema of its
 * own (`note` says why PostgreSQL is left out otherwise).
 */
export async function scratchDatabases(name: string): Promise<{ list: (() => Promise<ScratchDatabase>)[]; note?: string }> {
  const sqlite = async (): Promise<ScratchDatabase> => {
    const folder = join(ROOT, '.bench');
    mkdirSync(folder, { recursive: true });
    const path = join(folder, `${name}-${process.pid}.sqlite`);
    return {
      dialect: 'sqlite',
      url: path,
      drop: async () => {
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
      },
    };
  };
  const found = await benchPostgres();
  if (found.url === undefined) return { list: [sqlite], note: found.note };
  const base = found.url;
  const postgres = async (): Promise<ScratchDatabase> => {
    const schema = `bench_${name.replace(/\W/g, '_')}_${randomBytes(6).toString('hex')}`;
    await withClient(base, (client) => client.query(`create schema ${schema}`));
    return {
      dialect: 'postgres',
      url: inSchema(base, schema),
      drop: () => withClient(base, async (client) => void (await client.query(`drop schema ${schema} cascade`))),
    };
  };
  return { list: [sqlite, postgres] };
}
