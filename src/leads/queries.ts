import { type Kysely, type Selectable, sql } from 'kysely';
import type { Dialect } from '../db/connection.js';
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
    attempts: 0,
    updated_at: identity.created_at,
    scraping_at: null,
    generating_at: null,
    sending_at: null,
    completed_at: null,
    ...changes,
  };
}

export async function insertJob(db: Kysely<Database>, job: LeadJobRow): Promise<void> {
  await db.insertInto('lead_jobs').values(job).execute();
}

export async function updateJob(db: Kysely<Database>, id: string, changes: Partial<LeadJobRow>): Promise<void> {
  await db.updateTable('lead_jobs').set(changes).where('id', '=', id).execute();
}

export async function findJob(db: Kysely<Database>, accountId: number, id: string): Promise<LeadJobRow | undefined> {
  return db.selectFrom('lead_jobs').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}

/** The statuses a filter stands for: `processing` is every status between pending and the end. */
export function statusesOf(filter: string): LeadJobStatus[] {
  return filter === 'processing' ? ['scraping', 'generating', 'sending'] : [filter as LeadJobStatus];
}

export async function pageOfJobs(
  db: Kysely<Database>,
  accountId: number,
  options: { statuses: LeadJobStatus[] | undefined; limit: number; offset: number },
): Promise<{ total: number; jobs: LeadJobRow[] }> {
  let base = db.selectFrom('lead_jobs').where('account_id', '=', accountId);
  if (options.statuses) base = base.where('status', 'in', options.statuses);
  const [count, jobs] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    base.selectAll().orderBy('seq', 'desc').limit(options.limit).offset(options.offset).execute(),
  ]);
  return { total: Number(count.total), jobs };
}

/**
 * Takes up to `limit` queued jobs for this worker: pending ones, and running ones whose lease ran out (their
 * instance stopped mid-way). On PostgreSQL, `FOR UPDATE SKIP LOCKED` lets several instances claim at once without
 * taking the same job; SQLite has one writer, so the single UPDATE is enough there.
 */
export async function claimQueuedJobs(db: Kysely<Database>, dialect: Dialect, now: string, leaseUntil: string, limit: number): Promise<LeadJobRow[]> {
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const { rows } = await sql<LeadJobRow>`
    update lead_jobs
    set status = 'scraping', scraping_at = ${now}, lease_until = ${leaseUntil}, attempts = attempts + 1, updated_at = ${now}
    where id in (
      select id from lead_jobs
      where run_async = 1
        and (status = 'pending' or (status in ('scraping', 'generating', 'sending') and lease_until < ${now}))
      order by seq
      limit ${limit}
      ${lock}
    )
    returning *`.execute(db);
  return rows;
}

export async function findCompanyProfile(db: Kysely<Database>, domain: string, now: string): Promise<CompanyProfileTable | undefined> {
  return db.selectFrom('company_profiles').selectAll().where('domain', '=', domain).where('expires_at', '>', now).executeTakeFirst();
}

export async function saveCompanyProfile(db: Kysely<Database>, row: CompanyProfileTable): Promise<void> {
  const { domain, ...rest } = row;
  await db
    .insertInto('company_profiles')
    .values(row)
    .onConflict((oc) => oc.column('domain').doUpdateSet(rest))
    .execute();
}

export async function monthlyUsage(db: Kysely<Database>, accountId: number, month: string): Promise<number> {
  const row = await db.selectFrom('lead_usage').select('leads').where('account_id', '=', accountId).where('month', '=', month).executeTakeFirst();
  return row?.leads ?? 0;
}

export async function countLead(db: Kysely<Database>, accountId: number, month: string): Promise<void> {
  await db
    .insertInto('lead_usage')
    .values({ account_id: accountId, month, leads: 1 })
    .onConflict((oc) => oc.columns(['account_id', 'month']).doUpdateSet({ leads: sql`lead_usage.leads + 1` }))
    .execute();
}
