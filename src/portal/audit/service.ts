import type { Principal } from '../../accounts/service.js';
import { forbidden } from '../../errors.js';
import { toPortalTimestamp } from '../../time.js';
import type { AuditQueries } from './queries.js';

/** Who is acting and from where: what routes hand to services that record their actions. */
export interface RequestContext {
  principal: Principal;
  ip: string | null;
}

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

/** Reads the audit log: the account owner's alone. */
export class AuditService {
  constructor(private readonly queries: AuditQueries) {}

  async page(principal: Principal, page: number, perPage: number) {
    if (principal.kind !== 'owner') throw forbidden('Only the account owner may read the audit log');
    const [rows, total] = await Promise.all([
      this.queries.page(principal.accountId, perPage, (page - 1) * perPage),
      this.queries.count(principal.accountId),
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
    return { records, total, perPage };
  }
}
