import { type Kysely, type Selectable, sql } from 'kysely';
import type { Dialect } from '../db/connection.js';
import { flagSet } from '../db/dialect-sql.js';
import type { PlanName } from '../config.js';
import type { CompanyProfileTable, Database, LeadJobStatus, LeadJobTable } from '../db/types.js';

/** A job as the service handles it (seq, the storage's order, stays in SQL). */
export type LeadJobRow = Omit<Selectable<LeadJobTable>, 'seq'>;

type JobIdentity = Pick<LeadJobRow, 'id' | 'account_id' | 'user_id' | 'template_id' | 'first_name' | 'last_name' | 'email' | 'domain' | 'created_at'>;

/** A new job, pending, with nothing done yet; `changes` sets the rest. */
export function newJob(identity: JobIdentity, changes: Partial<LeadJobRow> = {}): LeadJobRow {
  return {
    ...identity,
    status: 'pending',
    run_async: 0,
    send_to: null,
    error_message: null,
    rejection_reason: null,
    email_subject: null,
    email_body: null,
    company: null,
    research_note: null,
    generator: null,
    lease_until: null,
    lease_owner: null,
    attempts: 0,
    updated_at: identity.created_at,
    scraping_at: null,
    generating_at: null,
    sending_at: null,
    completed_at: null,
    batch_id: null,
    batch_position: null,
    ...changes,
  };
}

/** The statuses a filter stands for: `processing` is every status between pending and the end. */
export function statusesOf(filter: string): LeadJobStatus[] {
  return filter === 'processing' ? ['scraping', 'generating', 'sending'] : [filter as LeadJobStatus];
}

/** Statuses of a job that has not ended: a queued job in one of them is the worker's to run. */
export const UNFINISHED: LeadJobStatus[] = ['pending', 'scraping', 'generating', 'sending'];

/** A queued job that could be claimed now, with its account's plan (which bounds the account's jobs in flight). */
export interface QueueCandidate {
  id: string;
  account_id: number;
  plan: PlanName;
}

/** The lead pipeline's jobs and the monthly count of leads (the queue, claimed by the worker, included). */
export class LeadQueries {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insertJob(job: LeadJobRow): Promise<void> {
    await this.db.insertInto('lead_jobs').values(job).execute();
  }

  /**
   * Counts the job's lead against the month's quota and inserts the job, in one transaction, unless the quota is used
   * up: returns false then, and neither counts nor inserts anything. A lead is thus counted exactly when its job
   * exists, and concurrent requests cannot pass the quota together (see countLeadsWithinQuota).
   */
  async insertJobWithinQuota(job: LeadJobRow, quota: number): Promise<boolean> {
    if (this.dialect === 'postgres') return this.insertJobWithinQuotaAtOnce(job, quota);
    return this.db.transaction().execute(async (trx) => {
      if ((await countLeadsWithinQuota(trx, this.dialect, job.account_id, job.created_at.slice(0, 7), 1, quota)) === 0) return false;
      await trx.insertInto('lead_jobs').values(job).execute();
      return true;
    });
  }

  /**
   * PostgreSQL: the same in one statement, one round trip instead of four. The usage upsert is a data-modifying CTE
   * that returns a row only when it counted the lead (PostgreSQL locks the usage row and checks the update's condition
   * again on its latest version, so concurrent requests cannot pass the quota together), and the job is inserted from that row; json_populate_record gives each value its
   * column's type (timestamptz, boolean), as an INSERT's VALUES would.
   */
  private async insertJobWithinQuotaAtOnce(job: LeadJobRow, quota: number): Promise<boolean> {
    const columns = Object.keys(job);
    const { rows } = await sql<{ id: string }>`
      with counted as (
        insert into lead_usage (account_id, month, leads) values (${job.account_id}, ${job.created_at.slice(0, 7)}, 1)
        on conflict (account_id, month) do update set leads = lead_usage.leads + 1 where lead_usage.leads < ${quota}
        returning 1
      )
      insert into lead_jobs (${sql.join(columns.map((column) => sql.ref(column)))})
      select ${sql.join(columns.map((column) => sql.ref(`job.${column}`)))}
      from counted, json_populate_record(null::lead_jobs, ${JSON.stringify(job)}) as job
      returning id`.execute(this.db);
    return rows.length > 0;
  }

  /**
   * Writes a job's changes. With `leaseOwner` (a queued job run by the worker) the write only happens while that claim
   * still holds the job: once the lease ran out and another claim took the job over, a stale runner changes nothing.
   * Returns whether the row was written.
   */
  async updateJob(id: string, changes: Partial<LeadJobRow>, leaseOwner?: string): Promise<boolean> {
    let update = this.db.updateTable('lead_jobs').set(changes).where('id', '=', id);
    if (leaseOwner !== undefined) update = update.where('lease_owner', '=', leaseOwner);
    const result = await update.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Ends a job as failed (or rejected: a batch's lead whose domain has no mail server) and gives its lead back to the
   * monthly quota, in one transaction: a lead counts only while its job has not failed (it was counted when accepted,
   * in the month of its created_at). Only a job that has not ended
   * is changed, and with `leaseOwner` only while that claim holds it, so a lead is given back once at most. Returns
   * whether the job was failed here.
   */
  async failJob(
    job: Pick<LeadJobRow, 'id' | 'account_id' | 'created_at'>,
    changes: Partial<LeadJobRow>,
    leaseOwner?: string,
    status: 'failed' | 'rejected' = 'failed',
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      let update = trx
        .updateTable('lead_jobs')
        .set({ ...changes, status })
        .where('id', '=', job.id)
        .where('status', 'in', UNFINISHED);
      if (leaseOwner !== undefined) update = update.where('lease_owner', '=', leaseOwner);
      const result = await update.executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await trx
        .updateTable('lead_usage')
        .set({ leads: sql`leads - 1` })
        .where('account_id', '=', job.account_id)
        .where('month', '=', job.created_at.slice(0, 7))
        .where('leads', '>', 0)
        .execute();
      return true;
    });
  }

  async findJob(accountId: number, id: string): Promise<LeadJobRow | undefined> {
    return this.db.selectFrom('lead_jobs').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  async pageOfJobs(
    accountId: number,
    options: { statuses: LeadJobStatus[] | undefined; batchId?: string | undefined; limit: number; offset: number },
  ): Promise<{ total: number; jobs: LeadJobRow[] }> {
    let base = this.db.selectFrom('lead_jobs').where('account_id', '=', accountId);
    if (options.statuses) base = base.where('status', 'in', options.statuses);
    if (options.batchId !== undefined) base = base.where('batch_id', '=', options.batchId);
    const [count, jobs] = await Promise.all([
      base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      base.selectAll().orderBy('seq', 'desc').limit(options.limit).offset(options.offset).execute(),
    ]);
    return { total: Number(count.total), jobs };
  }

  /**
   * Queued jobs free to claim: pending ones, and unfinished ones whose lease ran out (their instance stopped mid-way),
   * in submission order, but at most `perAccount[plan]` of each account. One account's backlog thus cannot fill a
   * claim and hold other accounts' jobs back behind it. Reads only; claimJobs takes them.
   */
  async queueCandidates(now: string, perAccount: Record<PlanName, number>, limit: number): Promise<QueueCandidate[]> {
    const { rows } = await sql<QueueCandidate>`
      select id, account_id, plan from (
        select j.id, j.account_id, j.seq, a.plan,
          row_number() over (partition by j.account_id order by j.seq) as place
        from lead_jobs j join accounts a on a.id = j.account_id
        where ${flagSet(this.dialect, 'j.run_async')}
          and j.status in (${sql.join(UNFINISHED)})
          and (j.lease_until is null or j.lease_until < ${now})
      ) queued
      where place <= case plan
        when 'pro' then cast(${perAccount.pro} as integer)
        when 'business' then cast(${perAccount.business} as integer)
        else cast(${perAccount.free} as integer) end
      order by seq
      limit ${limit}`.execute(this.db);
    return rows.map((row) => ({ ...row, account_id: Number(row.account_id) }));
  }

  /**
   * Leases the given queued jobs to one claim (`owner`, a fresh token) until `leaseUntil`, and returns those it got:
   * a job another instance claimed in the meantime is left out. The status stays as it is (the run sets `scraping`
   * when research starts). On PostgreSQL, `FOR UPDATE SKIP LOCKED` lets several instances claim at once without taking
   * the same job; SQLite has one writer, so the single UPDATE is enough there.
   */
  async claimJobs(ids: string[], owner: string, now: string, leaseUntil: string): Promise<LeadJobRow[]> {
    if (ids.length === 0) return [];
    const lock = this.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    const { rows } = await sql<LeadJobRow & { seq?: number }>`
      update lead_jobs
      set lease_owner = ${owner}, lease_until = ${leaseUntil}, attempts = attempts + 1
      where id in (
        select id from lead_jobs
        where id in (${sql.join(ids)})
          and ${flagSet(this.dialect, 'run_async')}
          and status in (${sql.join(UNFINISHED)})
          and (lease_until is null or lease_until < ${now})
        ${lock}
      )
      returning *`.execute(this.db);
    return rows.map(({ seq: _seq, ...job }) => job);
  }

  /** Extends the leases of the claims this instance holds (`owners`), for the jobs that have not ended yet. */
  async renewLeases(owners: string[], leaseUntil: string): Promise<void> {
    if (owners.length === 0) return;
    await this.db
      .updateTable('lead_jobs')
      .set({ lease_until: leaseUntil })
      .where('lease_owner', 'in', owners)
      .where('status', 'in', UNFINISHED)
      .execute();
  }

  async monthlyUsage(accountId: number, month: string): Promise<number> {
    const row = await this.db
      .selectFrom('lead_usage')
      .select('leads')
      .where('account_id', '=', accountId)
      .where('month', '=', month)
      .executeTakeFirst();
    return row?.leads ?? 0;
  }

  /** The account's sender settings and plan, with its owner's name. */
  async sender(accountId: number) {
    return this.db
      .selectFrom('accounts')
      .leftJoin('users', (join) => join.onRef('users.account_id', '=', 'accounts.id').on('users.kind', '=', 'owner'))
      .select(['accounts.name', 'accounts.plan', 'accounts.sender_name', 'accounts.sender_offer', 'users.firstname', 'users.lastname'])
      .where('accounts.id', '=', accountId)
      .orderBy('users.id')
      .executeTakeFirstOrThrow();
  }
}

/**
 * Counts up to `leads` leads against the month's quota, as many as it still allows, and returns how many it counted
 * (0 when it is used up). Run it in the transaction that inserts their jobs. The usage row is locked while it is read
 * and raised (PostgreSQL: FOR UPDATE; SQLite has one writer), so concurrent batches and single leads cannot pass the
 * quota together.
 */
export async function countLeadsWithinQuota(db: Kysely<Database>, dialect: Dialect, accountId: number, month: string, leads: number, quota: number) {
  await db
    .insertInto('lead_usage')
    .values({ account_id: accountId, month, leads: 0 })
    .onConflict((oc) => oc.columns(['account_id', 'month']).doNothing())
    .execute();
  let read = db.selectFrom('lead_usage').select('leads').where('account_id', '=', accountId).where('month', '=', month);
  if (dialect === 'postgres') read = read.forUpdate();
  const { leads: used } = await read.executeTakeFirstOrThrow();
  const counted = Math.max(0, Math.min(leads, quota - used));
  if (counted > 0) {
    await db
      .updateTable('lead_usage')
      .set({ leads: sql`leads + ${counted}` })
      .where('account_id', '=', accountId)
      .where('month', '=', month)
      .execute();
  }
  return counted;
}

/** The cache of company research, one row per domain, shared by every instance. */
export class CompanyProfileQueries {
  constructor(private readonly db: Kysely<Database>) {}

  /** The domain's research, unless it expired by `now`. */
  async find(domain: string, now: string): Promise<CompanyProfileTable | undefined> {
    return this.db.selectFrom('company_profiles').selectAll().where('domain', '=', domain).where('expires_at', '>', now).executeTakeFirst();
  }

  async save(row: CompanyProfileTable): Promise<void> {
    const { domain: _domain, ...rest } = row;
    await this.db
      .insertInto('company_profiles')
      .values(row)
      .onConflict((oc) => oc.column('domain').doUpdateSet(rest))
      .execute();
  }
}
