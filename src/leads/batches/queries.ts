import { type Kysely, type Selectable, sql } from 'kysely';
import type { Dialect } from '../../db/connection.js';
import type { Database, LeadBatchTable, LeadJobStatus } from '../../db/types.js';
import { countLeadsWithinQuota, type LeadJobRow, UNFINISHED } from '../queries.js';

export type LeadBatchRow = Selectable<LeadBatchTable>;

/** A lead of a batch that did not become a job: the monthly quota was used up by the leads before it. */
export interface NotAcceptedLead {
  position: number;
  first_name: string;
  last_name: string;
  email: string;
  reason: 'quota_exceeded';
}

/** How many of a batch's jobs are in each status. */
export type StatusCounts = Partial<Record<LeadJobStatus, number>>;

/** Rows a multi-row insert holds: lead_jobs has about 30 columns, and SQLite takes 32,766 parameters a statement. */
const INSERT_CHUNK = 250;

/** Lead batches: the batch rows, and the batch-wide reads of their jobs. */
export class LeadBatchQueries {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Stores a batch in one transaction: its jobs ended at once (`ended`: rejected addresses, which count against no
   * quota) and, of its `queued` jobs (in list order), as many as the month's quota still allows, each counted. The
   * queued jobs past the quota are kept with the batch as not accepted. Returns how many queued jobs were stored;
   * when `queued` is not empty and none fit, nothing is stored at all and the answer is 0.
   */
  async insertBatch(
    batch: Omit<LeadBatchRow, 'accepted' | 'not_accepted'>,
    queued: LeadJobRow[],
    ended: LeadJobRow[],
    quota: number,
  ): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const counted =
        queued.length === 0
          ? 0
          : await countLeadsWithinQuota(trx, this.dialect, batch.account_id, batch.created_at.slice(0, 7), queued.length, quota);
      if (queued.length > 0 && counted === 0) return 0;
      const notAccepted: NotAcceptedLead[] = queued.slice(counted).map((job) => ({
        position: job.batch_position ?? 0,
        first_name: job.first_name,
        last_name: job.last_name,
        email: job.email,
        reason: 'quota_exceeded',
      }));
      await trx
        .insertInto('lead_batches')
        .values({ ...batch, accepted: counted + ended.length, not_accepted: JSON.stringify(notAccepted) })
        .execute();
      const jobs = [...ended, ...queued.slice(0, counted)].sort((a, b) => (a.batch_position ?? 0) - (b.batch_position ?? 0));
      for (let start = 0; start < jobs.length; start += INSERT_CHUNK) {
        await trx
          .insertInto('lead_jobs')
          .values(jobs.slice(start, start + INSERT_CHUNK))
          .execute();
      }
      return counted;
    });
  }

  async findBatch(accountId: number, id: string): Promise<LeadBatchRow | undefined> {
    return this.db.selectFrom('lead_batches').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  async pageOfBatches(accountId: number, limit: number, offset: number): Promise<{ total: number; batches: LeadBatchRow[] }> {
    const base = this.db.selectFrom('lead_batches').where('account_id', '=', accountId);
    const [count, batches] = await Promise.all([
      base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      base.selectAll().orderBy('created_at', 'desc').orderBy('id').limit(limit).offset(offset).execute(),
    ]);
    return { total: Number(count.total), batches };
  }

  /** Each batch's jobs counted by status. */
  async statusCounts(batchIds: string[]): Promise<Map<string, StatusCounts>> {
    const counts = new Map<string, StatusCounts>(batchIds.map((id) => [id, {}]));
    if (batchIds.length === 0) return counts;
    const rows = await this.db
      .selectFrom('lead_jobs')
      .select(['batch_id', 'status', (eb) => eb.fn.countAll<number>().as('jobs')])
      .where('batch_id', 'in', batchIds)
      .groupBy(['batch_id', 'status'])
      .execute();
    for (const row of rows) {
      const batch = counts.get(row.batch_id ?? '');
      if (batch) batch[row.status] = Number(row.jobs);
    }
    return counts;
  }

  /** A batch's jobs in list order. */
  async jobsInOrder(batchId: string): Promise<LeadJobRow[]> {
    const rows = await this.db.selectFrom('lead_jobs').selectAll().where('batch_id', '=', batchId).orderBy('batch_position').execute();
    return rows.map(({ seq: _seq, ...job }) => job);
  }

  /**
   * Marks the batch completed if none of its jobs is still to end, and says whether this call did. Each job's end is
   * stored before this runs, so the last job to end sees every other ended; when two end together, the row lock lets
   * one of them through (`completed_at is null` is checked again on the locked row), so a batch completes once.
   */
  async completeIfDone(batchId: string, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('lead_batches')
      .set({ completed_at: now })
      .where('id', '=', batchId)
      .where('completed_at', 'is', null)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('lead_jobs')
              .select(sql`1`.as('one'))
              .where('batch_id', '=', batchId)
              .where('status', 'in', UNFINISHED),
          ),
        ),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
