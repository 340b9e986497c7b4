import type { Kysely } from 'kysely';
import type { Principal } from '../../accounts/service.js';
import type { Database } from '../../db/types.js';
import { forbidden } from '../../errors.js';
import { nowIso, toPortalTimestamp } from '../../time.js';

/** Who is acting and from where: what routes hand to services that record their actions. */
export interface RequestContext {
  principal: Principal;
  ip: string | null;
}

export type AuditAction = 'client.create' | 'client.update' | 'client.delete' | 'client.roles' | 'client.become';

export interface AuditEntryView {
  id: number;
  action: string;
  actor_id: number | null;
  impersonator_id: number | null;
  target_user_id: number | null;
  ip: string | null;
  details: Record<string, unknown> | null;
  created_at: string;
}

/**
 * Records one action in the account's audit log. Takes the handle of the transaction that made the change, so the
 * record and the change are kept or lost together. Details must never hold a secret (passwords, keys).
 */
export async function recordAudit(
  db: Kysely<Database>,
  context: RequestContext,
  action: AuditAction,
  targetUserId: number | null,
  details: Record<string, unknown> | null,
  at = nowIso(),
): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      account_id: context.principal.accountId,
      actor_id: context.principal.userId,
      impersonator_id: context.principal.impersonatorId,
      action,
      target_user_id: targetUserId,
      ip: context.ip,
      details: details === null ? null : JSON.stringify(details),
      created_at: at,
    })
    .execute();
}

/** Reads the audit log: the account owner's alone. */
export class AuditService {
  constructor(private readonly db: Kysely<Database>) {}

  async page(principal: Principal, page: number, perPage: number) {
    if (principal.kind !== 'owner') throw forbidden('Only the account owner may read the audit log');
    const scoped = this.db.selectFrom('audit_log').where('account_id', '=', principal.accountId);
    const [rows, counted] = await Promise.all([
      scoped
        .selectAll()
        .orderBy('id', 'desc')
        .limit(perPage)
        .offset((page - 1) * perPage)
        .execute(),
      scoped.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    const records: AuditEntryView[] = rows.map((row) => ({
      id: row.id,
      action: row.action,
      actor_id: row.actor_id,
      impersonator_id: row.impersonator_id,
      target_user_id: row.target_user_id,
      ip: row.ip,
      details: row.details === null ? null : (JSON.parse(row.details) as Record<string, unknown>),
      created_at: toPortalTimestamp(row.created_at),
    }));
    return { records, total: Number(counted.total), perPage };
  }
}
