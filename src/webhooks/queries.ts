import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { Dialect } from '../db/connection.js';
import { flagSet } from '../db/dialect-sql.js';
import type { Database, WebhookAttemptTable, WebhookDeliveryStatus, WebhookDeliveryTable, WebhookEndpointTable } from '../db/types.js';

export type WebhookEndpointRow = Selectable<WebhookEndpointTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveryTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptTable>;
export type NewWebhookDelivery = Insertable<WebhookDeliveryTable>;

/** What one attempt ended in, as the worker records it. */
export interface AttemptRecord {
  deliveryId: number;
  endpointId: number;
  /** The claim that ran the attempt: nothing is written once another claim took the delivery over. */
  owner: string;
  attemptedAt: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  succeeded: boolean;
  /** The delivery after this attempt: pending with its next attempt, succeeded or failed. */
  delivery: Pick<WebhookDeliveryRow, 'status' | 'next_attempt_at'>;
  /** Disable the endpoint when it has failed since this time or earlier (then its waiting deliveries fail). */
  disableIfFailingSince: string;
  disabledReason: string;
}

/** Endpoints, their deliveries (the worker's queue) and attempts. */
export class WebhookQueries {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async listEndpoints(accountId: number): Promise<WebhookEndpointRow[]> {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  }

  async countEndpoints(accountId: number): Promise<number> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  /** Endpoints the worker disabled (not those their owner turned off): the dashboard tells the owner. */
  async countDisabledByFailure(accountId: number): Promise<number> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('account_id', '=', accountId)
      .where('enabled', '=', 0)
      .where('disabled_reason', 'is not', null)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  async findEndpoint(accountId: number, id: number): Promise<WebhookEndpointRow | undefined> {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  async endpointsByIds(ids: number[]): Promise<WebhookEndpointRow[]> {
    if (ids.length === 0) return [];
    return this.db.selectFrom('webhook_endpoints').selectAll().where('id', 'in', ids).execute();
  }

  async insertEndpoint(row: Insertable<WebhookEndpointTable>): Promise<WebhookEndpointRow> {
    return this.db.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
  }

  async updateEndpoint(accountId: number, id: number, changes: Updateable<WebhookEndpointTable>): Promise<WebhookEndpointRow | undefined> {
    return this.db
      .updateTable('webhook_endpoints')
      .set(changes)
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .returningAll()
      .executeTakeFirst();
  }

  async deleteEndpoint(accountId: number, id: number): Promise<boolean> {
    const result = await this.db.deleteFrom('webhook_endpoints').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** The account and app id of a publication (feed events belong to the publication's account). */
  async publicationOwner(publicationId: number): Promise<{ account_id: number; app_id: string } | undefined> {
    return this.db.selectFrom('publications').select(['account_id', 'app_id']).where('id', '=', publicationId).executeTakeFirst();
  }

  async insertDeliveries(rows: NewWebhookDelivery[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.insertInto('webhook_deliveries').values(rows).execute();
  }

  async insertDelivery(row: NewWebhookDelivery): Promise<WebhookDeliveryRow> {
    return this.db.insertInto('webhook_deliveries').values(row).returningAll().executeTakeFirstOrThrow();
  }

  async pageOfDeliveries(
    endpointId: number,
    options: { status: WebhookDeliveryStatus | undefined; limit: number; offset: number },
  ): Promise<{ total: number; deliveries: WebhookDeliveryRow[] }> {
    let base = this.db.selectFrom('webhook_deliveries').where('endpoint_id', '=', endpointId);
    if (options.status) base = base.where('status', '=', options.status);
    const [count, deliveries] = await Promise.all([
      base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      base.selectAll().orderBy('id', 'desc').limit(options.limit).offset(options.offset).execute(),
    ]);
    return { total: Number(count.total), deliveries };
  }

  async findDelivery(endpointId: number, id: number): Promise<WebhookDeliveryRow | undefined> {
    return this.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).where('endpoint_id', '=', endpointId).executeTakeFirst();
  }

  async attemptsOf(deliveryId: number): Promise<WebhookAttemptRow[]> {
    return this.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('id').execute();
  }

  /**
   * Queues a delivery again, to be tried at `at` with a fresh retry schedule, unless an attempt of it is in flight
   * (its lease runs past `now`): returns whether it was queued.
   */
  async requeueDelivery(endpointId: number, id: number, at: string, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', round_attempts: 0, next_attempt_at: at, lease_owner: null, lease_until: null, updated_at: now })
      .where('id', '=', id)
      .where('endpoint_id', '=', endpointId)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Deletes ended deliveries (succeeded or failed) created before `before`, with their attempts; returns how many. */
  async deleteEndedBefore(before: string): Promise<number> {
    const result = await this.db
      .deleteFrom('webhook_deliveries')
      .where('status', 'in', ['succeeded', 'failed'])
      .where('created_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /**
   * Leases up to `limit` deliveries due at `now` (of enabled endpoints) to one claim, `owner`, until `leaseUntil`,
   * and returns them. On PostgreSQL `FOR UPDATE SKIP LOCKED` lets instances claim at once without taking the same
   * rows (a row locked by another claim is skipped; one it has leased meanwhile fails the re-checked condition);
   * SQLite has one writer, so the single UPDATE is enough there.
   */
  async claimDue(owner: string, now: string, leaseUntil: string, limit: number): Promise<WebhookDeliveryRow[]> {
    const lock = this.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    const { rows } = await sql<WebhookDeliveryRow>`
      update webhook_deliveries
      set lease_owner = ${owner}, lease_until = ${leaseUntil}
      where id in (
        select id from webhook_deliveries
        where status = 'pending'
          and next_attempt_at <= ${now}
          and (lease_until is null or lease_until < ${now})
          and endpoint_id in (select id from webhook_endpoints where ${flagSet(this.dialect, 'enabled')})
        order by next_attempt_at, id
        limit ${limit}
        ${lock}
      )
      returning *`.execute(this.db);
    return rows.map((row) => ({ ...row, id: Number(row.id), endpoint_id: Number(row.endpoint_id), account_id: Number(row.account_id) }));
  }

  /**
   * Records an attempt, in one transaction: the attempt's row, the delivery's new state (only while `owner` still
   * holds its lease; otherwise nothing is written and false is returned), and the endpoint's health: a success
   * clears its failing streak; a failure starts one, or disables the endpoint once it has failed since
   * `disableIfFailingSince` (its waiting deliveries then fail with the reason). Returns whether it was recorded, and
   * whether the endpoint was disabled here.
   */
  async recordAttempt(record: AttemptRecord): Promise<{ recorded: boolean; disabled: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('webhook_deliveries')
        .set({
          status: record.delivery.status,
          next_attempt_at: record.delivery.next_attempt_at,
          attempts: sql`attempts + 1`,
          round_attempts: sql`round_attempts + 1`,
          lease_owner: null,
          lease_until: null,
          last_attempt_at: record.attemptedAt,
          last_status_code: record.statusCode,
          last_duration_ms: record.durationMs,
          last_error: record.error,
          updated_at: record.attemptedAt,
          ...(record.succeeded ? { delivered_at: record.attemptedAt } : {}),
        })
        .where('id', '=', record.deliveryId)
        .where('lease_owner', '=', record.owner)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) return { recorded: false, disabled: false };
      await trx
        .insertInto('webhook_attempts')
        .values({
          delivery_id: record.deliveryId,
          attempted_at: record.attemptedAt,
          status_code: record.statusCode,
          duration_ms: record.durationMs,
          error: record.error,
          succeeded: record.succeeded ? 1 : 0,
        })
        .execute();
      if (record.succeeded) {
        await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', record.endpointId).execute();
        return { recorded: true, disabled: false };
      }
      const endpoint = await trx
        .updateTable('webhook_endpoints')
        .set({ failing_since: sql`coalesce(failing_since, ${record.attemptedAt})` })
        .where('id', '=', record.endpointId)
        .returning(['failing_since', 'enabled', 'disabled_reason'])
        .executeTakeFirst();
      if (endpoint && endpoint.enabled !== 1 && endpoint.disabled_reason !== null) {
        // Disabled for its failures by another attempt while this one ran: this delivery ends as the others did.
        await trx
          .updateTable('webhook_deliveries')
          .set({ status: 'failed', next_attempt_at: null })
          .where('id', '=', record.deliveryId)
          .where('status', '=', 'pending')
          .execute();
        return { recorded: true, disabled: false };
      }
      if (!endpoint || endpoint.enabled !== 1 || endpoint.failing_since === null || endpoint.failing_since > record.disableIfFailingSince) {
        return { recorded: true, disabled: false };
      }
      await trx
        .updateTable('webhook_endpoints')
        .set({ enabled: 0, disabled_at: record.attemptedAt, disabled_reason: record.disabledReason, updated_at: record.attemptedAt })
        .where('id', '=', record.endpointId)
        .execute();
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', next_attempt_at: null, last_error: record.disabledReason, updated_at: record.attemptedAt })
        .where('endpoint_id', '=', record.endpointId)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', record.attemptedAt)]))
        .execute();
      return { recorded: true, disabled: true };
    });
  }
}
