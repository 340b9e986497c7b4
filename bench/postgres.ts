// Which PostgreSQL the benchmarks use: BENCH_POSTGRES_URL, else the local server CI has
// (postgres://root@127.0.0.1:5432/test) when it answers. An explicit BENCH_POSTGRES_URL that does not answer is an
// error; a missing local server skips the PostgreSQL rows with a note.

import pg from 'pg';

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
