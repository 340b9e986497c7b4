import type { Kysely } from 'kysely';
import type { Principal } from '../../accounts/service.js';
import type { Database } from '../../db/types.js';

export type AuditAction = 'client.create' | 'client.update' | 'client.delete' | 'client.roles' | 'client.become';

/**
 * The account's audit log. A service records an action with AuditQueries built on the handle of the transaction
 * that made the change, so the record and the change are kept or lost together.
 */
export class AuditQueries {
  constructor(private readonly db: Kysely<Database>) {}

  /** Records one action of `actor`, made from `ip`. Details must never hold a secret (passwords, keys). */
  async record(
    { principal: actor, ip }: { principal: Principal; ip: string | null },
    action: AuditAction,
    targetUserId: number | null,
    details: Record<string, unknown> | null,
    at: string,
  ): Promise<void> {
    await this.db
      .insertInto('audit_log')
      .values({
        account_id: actor.accountId,
        actor_id: actor.userId,
        impersonator_id: actor.impersonatorId,
        action,
        target_user_id: targetUserId,
        ip,
        details: details === null ? null : JSON.stringify(details),
        created_at: at,
      })
      .execute();
  }

  /** One page of the account's log, newest first. */
  page(accountId: number, limit: number, offset: number) {
    return this.db
      .selectFrom('audit_log')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  async count(accountId: number): Promise<number> {
    const row = await this.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }
}
