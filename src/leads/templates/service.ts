import { randomUUID } from 'node:crypto';
import type { LeadTemplateTable } from '../../db/types.js';
import { AppError, conflict, notFound, validationError } from '../../errors.js';
import { nowIso } from '../../time.js';
import { validateTemplate } from './engine.js';
import type { TemplateQueries } from './queries.js';

/** Enough for any real sales team; a bound so that one account cannot fill the database. */
export const MAX_TEMPLATES_PER_ACCOUNT = 200;

export interface TemplateInput {
  name: string;
  /** The subject line template; empty lets the generator (built-in or LLM) write the subject. */
  subject?: string;
  /** The body template, which is also the prompt when an LLM writes the email. */
  body: string;
  isDefault?: boolean;
}

export interface TemplateView {
  id: string;
  name: string;
  subject: string;
  body: string;
  is_default: boolean;
  created_at: string;
  updated_at: string;
}

/** Prompt templates of an account: what the dashboard and the CLI call. Every text is checked at save time. */
export class TemplateService {
  constructor(private readonly queries: TemplateQueries) {}

  async list(accountId: number): Promise<TemplateView[]> {
    return (await this.queries.list(accountId)).map(present);
  }

  async get(accountId: number, id: string): Promise<TemplateView> {
    return present(await this.find(accountId, id));
  }

  /** The template a lead uses: the one named, else the account's default, else none (the built-in one). */
  async forLead(accountId: number, id: string | undefined): Promise<LeadTemplateTable | undefined> {
    if (id !== undefined) return this.find(accountId, id);
    return this.queries.findDefault(accountId);
  }

  async create(accountId: number, input: TemplateInput): Promise<TemplateView> {
    const text = checkedTemplate({ name: input.name, subject: input.subject ?? '', body: input.body });
    const now = nowIso();
    const row: LeadTemplateTable = {
      id: randomUUID(),
      account_id: accountId,
      ...text,
      is_default: input.isDefault ? 1 : 0,
      created_at: now,
      updated_at: now,
    };
    await this.queries.transaction(async (queries) => {
      if ((await queries.count(accountId)) >= MAX_TEMPLATES_PER_ACCOUNT) {
        throw new AppError('validation_failed', `An account holds at most ${MAX_TEMPLATES_PER_ACCOUNT} templates; delete one first`);
      }
      await assertNameFree(queries, accountId, text.name);
      if (row.is_default) await queries.clearDefault(accountId);
      await queries.insert(row);
    });
    return present(row);
  }

  async update(accountId: number, id: string, input: Partial<TemplateInput>): Promise<TemplateView> {
    return this.queries.transaction(async (queries) => {
      const current = await this.find(accountId, id, queries);
      const text = checkedTemplate({ name: input.name ?? current.name, subject: input.subject ?? current.subject, body: input.body ?? current.body });
      if (text.name !== current.name) await assertNameFree(queries, accountId, text.name);
      const isDefault = input.isDefault === undefined ? current.is_default : input.isDefault ? 1 : 0;
      if (isDefault && !current.is_default) await queries.clearDefault(accountId);
      const changes = { ...text, is_default: isDefault, updated_at: nowIso() };
      await queries.update(id, changes);
      return present({ ...current, ...changes });
    });
  }

  async setDefault(accountId: number, id: string): Promise<TemplateView> {
    return this.update(accountId, id, { isDefault: true });
  }

  async delete(accountId: number, id: string): Promise<void> {
    await this.find(accountId, id);
    // Jobs keep their text (subject and body are stored on the job); their template_id becomes null.
    await this.queries.delete(accountId, id);
  }

  private async find(accountId: number, id: string, queries: TemplateQueries = this.queries): Promise<LeadTemplateTable> {
    const row = UUID.test(id) ? await queries.find(accountId, id.toLowerCase()) : undefined;
    if (!row) throw notFound(`Template ${id}`);
    return row;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The template's texts, normalized, or a 400 naming each problem (with its line and column). */
export function checkedTemplate(input: { name: string; subject: string; body: string }) {
  const text = { name: input.name.trim(), subject: input.subject.trim(), body: input.body.replace(/\r\n?/g, '\n') };
  const withNul = (['name', 'subject', 'body'] as const).filter((field) => text[field].includes('\0'));
  if (withNul.length > 0) throw validationError(withNul.map((field) => ({ path: `/${field}`, message: 'must not contain the NUL character' })));
  const problems = validateTemplate(text);
  if (problems.length > 0) {
    throw validationError(problems.map((problem) => ({ path: `/${problem.field}`, message: problem.message })));
  }
  return text;
}

async function assertNameFree(queries: TemplateQueries, accountId: number, name: string): Promise<void> {
  if (await queries.nameTaken(accountId, name)) throw conflict(`A template named "${name}" already exists`);
}

function present(row: LeadTemplateTable): TemplateView {
  return {
    id: row.id,
    name: row.name,
    subject: row.subject,
    body: row.body,
    is_default: row.is_default === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
