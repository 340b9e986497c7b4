import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Storage } from '../../src/db/connection.js';
import type { ClientAccessLevel } from '../../src/portal/permissions.js';
import type { Response } from './app.js';
import { type Api, PORTAL } from './portal.js';
import { type ClientUser, createClientUser } from './roles.js';

export const CLIENTS = `${PORTAL}/clients`;
export const AUDIT = `${PORTAL}/audit`;
export const PASSWORD = 'correct horse battery';

/** Every field of the spec's Client table. */
export const CLIENT_FIELDS = [
  'id',
  'firstname',
  'lastname',
  'email',
  'created_at',
  'updated_at',
  'last_seen_at',
  'sign_in_count',
  'gravatar_url',
  'roles',
].sort();
export const ROLE_FIELDS = ['id', 'user_id', 'publication_id', 'access_level', 'created_at', 'updated_at'].sort();

export interface RoleView {
  id: number;
  user_id: number;
  publication_id: number;
  access_level: string;
  created_at: string;
  updated_at: string;
}

export interface ClientView {
  id: number;
  firstname: string;
  lastname: string;
  email: string;
  created_at: string;
  updated_at: string;
  last_seen_at: string | null;
  sign_in_count: number;
  gravatar_url: string;
  roles: RoleView[];
}

let counter = 0;

export function uniqueEmail(prefix = 'client'): string {
  counter += 1;
  return `${prefix}${counter}-${randomBytes(3).toString('hex')}@example.com`;
}

/** A valid create body with a fresh email. */
export function clientBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { email: uniqueEmail(), firstname: 'Ada', lastname: 'Lovelace', password: PASSWORD, ...overrides };
}

export function expectStatus(response: Response, status: number): void {
  assert.equal(response.status, status, `expected ${status}, got ${response.status} ${response.raw.slice(0, 500)}`);
}

/** Creates a client through the API. */
export async function createClient(api: Api, overrides: Record<string, unknown> = {}): Promise<ClientView> {
  const response = await api.post<ClientView>(`${CLIENTS}/`, clientBody(overrides));
  expectStatus(response, 201);
  return response.body;
}

export type SeededClient = ClientUser;

/** A client with roles and a key of its own, written straight to the database (not through the API). */
export function seedClient(
  storage: Storage,
  accountId: number,
  roles: [publicationId: number, level: ClientAccessLevel][] = [],
): Promise<SeededClient> {
  return createClientUser(
    storage,
    accountId,
    roles.map(([publicationId, accessLevel]) => ({ publicationId, accessLevel })),
  );
}

/** The audit rows of an account, oldest first, details parsed. */
export async function auditRows(storage: Storage, accountId: number) {
  const rows = await storage.db.selectFrom('audit_log').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((row) => ({ ...row, details: row.details === null ? null : JSON.parse(row.details) }));
}
