import type { Insertable, Kysely } from 'kysely';
import type { Database, IdempotencyKeyTable } from '../../db/types.js';

/** The Idempotency-Key table: one row per account and key, holding the request's hash and, once answered, its answer. */
export class IdempotencyQueries {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts the key's row unless the account holds that key already; returns whether it was inserted. */
  async insertIfAbsent(row: Insertable<IdempotencyKeyTable>): Promise<boolean> {
    const inserted = await this.db
      .insertInto('idempotency_keys')
      .values(row)
      .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async find(accountId: number, key: string) {
    return this.db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).where('key', '=', key).executeTakeFirst();
  }

  /** Starts an expired key afresh for another request; returns whether this call did (of two racing, one does). */
  async restartExpired(
    accountId: number,
    key: string,
    fresh: Pick<IdempotencyKeyTable, 'request_hash' | 'created_at' | 'expires_at'>,
    now: string,
  ): Promise<boolean> {
    const taken = await this.db
      .updateTable('idempotency_keys')
      .set({ ...fresh, status_code: null, response: null, renewed_at: null })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(taken.numUpdatedRows) === 1;
  }

  /**
   * Marks a key in progress alive at `now`, only if its last sign of life is still `lastSign` (what the caller saw):
   * of two racing takeovers, one succeeds. Returns whether this one did.
   */
  async takeOver(accountId: number, key: string, lastSign: string, now: string): Promise<boolean> {
    const taken = await this.db
      .updateTable('idempotency_keys')
      .set({ renewed_at: now })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('status_code', 'is', null)
      .where((eb) => eb(eb.fn.coalesce('renewed_at', 'created_at'), '=', lastSign))
      .executeTakeFirst();
    return Number(taken.numUpdatedRows) === 1;
  }

  /** A key in progress shows it is alive at `now`. */
  async renew(accountId: number, key: string, now: string): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ renewed_at: now })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('status_code', 'is', null)
      .execute();
  }

  async complete(accountId: number, key: string, statusCode: number, response: string): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ status_code: statusCode, response })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .execute();
  }

  /** Deletes a key still in progress (never one with an answer). */
  async deleteInProgress(accountId: number, key: string): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('status_code', 'is', null)
      .execute();
  }

  async deleteExpired(now: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).execute();
  }
}
