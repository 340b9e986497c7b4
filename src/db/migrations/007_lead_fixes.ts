import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';

export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  // Who holds a queued job's lease: a token drawn afresh at every claim. A runner's writes name its token, so once
  // another claim has taken the job over (the lease ran out), the stale runner's writes change nothing.
  await db.schema.alterTable('lead_jobs').addColumn('lease_owner', 'text').execute();
  // An Idempotency-Key in progress is renewed by the request holding it while that request runs; one not renewed
  // for a while belongs to a process that died, and the client's retry may take it over. Null: never renewed
  // (created_at stands for it).
  await db.schema.alterTable('idempotency_keys').addColumn('renewed_at', 'text').execute();
}
