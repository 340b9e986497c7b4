import type { Kysely } from 'kysely';
import type { Database, LeadTemplateTable } from '../../db/types.js';

/**
 * An account's prompt templates. Built on the database or on a transaction's handle: `transaction` hands the work a
 * TemplateQueries bound to one.
 */
export class TemplateQueries {
  constructor(private readonly db: Kysely<Database>) {}

  /** Runs `work` in one transaction: every query it makes through the TemplateQueries it is given is kept, or none. */
  transaction<T>(work: (queries: TemplateQueries) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => work(new TemplateQueries(trx)));
  }

  async list(accountId: number): Promise<LeadTemplateTable[]> {
    return this.db.selectFrom('lead_templates').selectAll().where('account_id', '=', accountId).orderBy('name').execute();
  }

  async find(accountId: number, id: string): Promise<LeadTemplateTable | undefined> {
    return this.db.selectFrom('lead_templates').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  async findDefault(accountId: number): Promise<LeadTemplateTable | undefined> {
    return this.db.selectFrom('lead_templates').selectAll().where('account_id', '=', accountId).where('is_default', '=', 1).executeTakeFirst();
  }

  async count(accountId: number): Promise<number> {
    const { count } = await this.db
      .selectFrom('lead_templates')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(count);
  }

  async nameTaken(accountId: number, name: string): Promise<boolean> {
    const taken = await this.db
      .selectFrom('lead_templates')
      .select('id')
      .where('account_id', '=', accountId)
      .where('name', '=', name)
      .executeTakeFirst();
    return taken !== undefined;
  }

  async clearDefault(accountId: number): Promise<void> {
    await this.db.updateTable('lead_templates').set({ is_default: 0 }).where('account_id', '=', accountId).where('is_default', '=', 1).execute();
  }

  async insert(row: LeadTemplateTable): Promise<void> {
    await this.db.insertInto('lead_templates').values(row).execute();
  }

  async update(id: string, changes: Partial<LeadTemplateTable>): Promise<void> {
    await this.db.updateTable('lead_templates').set(changes).where('id', '=', id).execute();
  }

  async delete(accountId: number, id: string): Promise<void> {
    await this.db.deleteFrom('lead_templates').where('id', '=', id).where('account_id', '=', accountId).execute();
  }
}
