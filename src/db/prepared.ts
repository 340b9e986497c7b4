import { CompiledQuery, type Kysely } from 'kysely';

/**
 * Starts the SQL of every prepared query. On PostgreSQL, statements that carry it are run as named (server-side
 * prepared) statements, parsed and planned once per connection (see openPostgres); on SQLite every statement is kept
 * prepared anyway. Only these few hot point lookups are named: a generic plan is right for them, and the server keeps
 * a bounded number of plans per connection.
 */
export const PREPARED_MARK = '/* prepared */ ';

/**
 * Runs a built query as a prepared statement on PostgreSQL (see PREPARED_MARK): for hot queries whose SQL text is the
 * same at every call and for which one generic plan is right whatever the values.
 */
export async function executePrepared<Database, Row>(db: Kysely<Database>, query: { compile(): CompiledQuery<Row> }): Promise<Row[]> {
  const compiled = query.compile();
  return (await db.executeQuery(CompiledQuery.raw(PREPARED_MARK + compiled.sql, [...compiled.parameters]) as CompiledQuery<Row>)).rows;
}

/** Stands for the n-th argument of a prepared query while it is compiled. */
class Slot {
  constructor(readonly index: number) {}
}

/**
 * A query built and compiled by Kysely once, then run with new arguments each time. On the hottest reads
 * (a key, a publication, an article) building and compiling cost more than the database does. `build` must put
 * each argument into the query as one value (no lists, whose length would change the SQL).
 */
export function preparedQuery<Database, Args extends unknown[], Row>(
  db: Kysely<Database>,
  arity: Args['length'],
  build: (...args: Args) => { compile(): CompiledQuery<Row> },
): (...args: Args) => Promise<Row[]> {
  let compiled: CompiledQuery<Row> | undefined;
  return async (...args: Args) => {
    compiled ??= build(...(Array.from({ length: arity }, (_, index) => new Slot(index)) as Args)).compile();
    const parameters = compiled.parameters.map((value) => (value instanceof Slot ? args[value.index] : value));
    const result = await db.executeQuery(CompiledQuery.raw(PREPARED_MARK + compiled.sql, parameters) as CompiledQuery<Row>);
    return result.rows;
  };
}
