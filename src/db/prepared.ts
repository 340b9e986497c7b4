import { CompiledQuery, type Kysely } from 'kysely';

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
    const result = await db.executeQuery(CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<Row>);
    return result.rows;
  };
}
