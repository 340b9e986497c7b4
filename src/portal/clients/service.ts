import { createHash } from 'node:crypto';
import { hashPassword } from '../../accounts/passwords.js';
import { checkPassword, normalizeEmail, type Principal } from '../../accounts/service.js';
import type { RoleRow, User } from '../../db/types.js';
import { conflict, type FieldProblem, forbidden, invalidField, notFound, validationError } from '../../errors.js';
import { nowIso, toPortalTimestamp } from '../../time.js';
import type { RequestContext } from '../audit/service.js';
import type { ClientQueries, RoleValue } from './queries.js';
import type { ClientCreateInput, ClientPageOptions, ClientUpdateInput, ClientView, RoleInputValue } from './schemas.js';

/** How long a key from "become" acts as the client. */
export const BECOME_TTL_MS = 60 * 60 * 1000;

/** Who manages clients, and where. */
interface Manager {
  principal: Principal;
  /** The publications the caller is an admin of; null for the account owner, who holds every publication. */
  adminOf: Set<number> | null;
}

/**
 * Clients: the sub-users of an account. The owner manages all of them. A client that is an admin of a publication
 * manages the clients it could have made itself (accounts/queries.ts adminManages): clients holding at least one
 * role, every role on a publication it administers, none of them admin. Those are the only clients it lists, and
 * the others answer 404 to it (get, update, password, delete, become), as other invisible things do; it never
 * grants the admin level nor a role beyond its publications (403). Clients without any role are the owner's alone.
 * Every change is recorded in the audit log, in the change's transaction.
 */
export class ClientService {
  constructor(private readonly queries: ClientQueries) {}

  async page(principal: Principal, page: number, options: ClientPageOptions) {
    const manager = await this.manager(principal);
    const perPage = options.per_page ?? 20;
    const filter = {
      accountId: principal.accountId,
      text: options.filter || undefined,
      publicationId: options.publication_id,
      managedBy: managedBy(manager),
    };
    const order = { field: options.order_by ?? 'id', direction: options.order_dir ?? 'desc' } as const;
    const [rows, total] = await Promise.all([this.queries.window(filter, order, perPage, (page - 1) * perPage), this.queries.count(filter)]);
    return { records: await this.present(rows), total, perPage };
  }

  async get(principal: Principal, id: number): Promise<ClientView> {
    const manager = await this.manager(principal);
    return this.presentOne(await this.find(manager, id));
  }

  async create(context: RequestContext, input: ClientCreateInput): Promise<ClientView> {
    const manager = await this.manager(context.principal);
    const email = normalizeEmail(input.email);
    checkPassword(input.password, email);
    const roles = await this.checkRoles(context.principal, input.roles ?? []);
    checkGrants(manager, [], roles);
    // A client without roles would be beyond the admin's reach the moment it exists: the owner's alone.
    if (manager.adminOf !== null && roles.length === 0) {
      throw forbidden('Admins create clients with a role on a publication they administer; only the account owner creates clients without roles');
    }
    if (await this.queries.emailTaken(email)) throw conflict(`A user with the email ${email} already exists`);
    const passwordHash = await hashPassword(input.password);
    const now = nowIso();
    const firstname = input.firstname.trim();
    const lastname = input.lastname.trim();
    const id = await this.queries.transaction(async ({ clients, audit }) => {
      const created = await clients.insert({
        account_id: context.principal.accountId,
        email,
        firstname,
        lastname,
        password_hash: passwordHash,
        kind: 'client',
        created_at: now,
        updated_at: now,
      });
      await clients.replaceRoles(created, [], roles, now);
      await audit.record(context, 'client.create', created, { email, firstname, lastname }, now);
      if (roles.length > 0) await audit.record(context, 'client.roles', created, { old: [], new: sortRoles(roles) }, now);
      return created;
    });
    return this.presentOne(await this.find(manager, id));
  }

  async update(context: RequestContext, id: number, input: ClientUpdateInput): Promise<ClientView> {
    const manager = await this.manager(context.principal);
    const client = await this.find(manager, id);
    const currentRows = (await this.queries.rolesOf([id])).get(id) ?? [];
    const current = currentRows.map(roleValue);

    if (input.password !== undefined) {
      if (input.password_confirmation === undefined) throw invalidField('/password_confirmation', 'is required with password');
      if (input.password_confirmation !== input.password) throw invalidField('/password_confirmation', 'must match password');
      checkPassword(input.password, client.email);
    } else if (input.password_confirmation !== undefined) {
      throw invalidField('/password', 'is required with password_confirmation');
    }
    const roles = input.roles === undefined ? undefined : await this.checkRoles(context.principal, input.roles);
    const rolesChange = roles !== undefined && !sameRoles(current, roles);
    if (roles !== undefined) checkGrants(manager, current, roles);

    const now = nowIso();
    const changed: Record<string, unknown> = {};
    const changes: { firstname?: string; lastname?: string; password_hash?: string; updated_at: string } = { updated_at: now };
    for (const field of ['firstname', 'lastname'] as const) {
      const value = input[field]?.trim();
      if (value !== undefined && value !== client[field]) {
        changes[field] = value;
        changed[field] = { from: client[field], to: value };
      }
    }
    if (input.password !== undefined) {
      changes.password_hash = await hashPassword(input.password);
      changed.password = true;
    }
    await this.queries.transaction(async ({ clients, accounts, audit }) => {
      await clients.update(id, changes);
      // A password set by the owner or an admin ends the client's sessions, as changing one's own does (its API
      // keys stay: they are not tied to the password). Whoever knew the old password is signed out.
      if (changes.password_hash !== undefined) await accounts.revokeSessions(id, now);
      if (Object.keys(changed).length > 0) await audit.record(context, 'client.update', id, changed, now);
      if (roles !== undefined && rolesChange) {
        await clients.replaceRoles(id, currentRows, roles, now);
        await audit.record(context, 'client.roles', id, { old: sortRoles(current), new: sortRoles(roles) }, now);
      }
    });
    // Read back as the owner would: an admin that took a client's last role away has just put it out of its reach,
    // and is still answered with what it did.
    return this.presentOne(await this.find({ principal: context.principal, adminOf: null }, id));
  }

  /** Deletes the client: its keys (sessions and "become" keys included) stop working at once; its articles stay. */
  async remove(context: RequestContext, id: number): Promise<void> {
    const manager = await this.manager(context.principal);
    const client = await this.find(manager, id);
    const current = ((await this.queries.rolesOf([id])).get(id) ?? []).map(roleValue);
    await this.queries.transaction(async ({ clients, audit }) => {
      if (!(await clients.delete(context.principal.accountId, id))) throw notFound(`Client ${id}`);
      await audit.record(
        context,
        'client.delete',
        id,
        { email: client.email, firstname: client.firstname, lastname: client.lastname, roles: sortRoles(current) },
        nowIso(),
      );
    });
  }

  /**
   * A key that acts as the client for an hour, marked with the caller as its impersonator. Never an escalation:
   * an admin becomes only the clients it manages, and a key from "become" becomes nobody. The key works only while
   * its issuer still may become the client (AccountService.authenticate checks it on every use).
   */
  async become(context: RequestContext, id: number) {
    const { principal } = context;
    if (principal.impersonatorId !== null) throw forbidden('A key from "become" may not become anyone');
    const manager = await this.manager(principal);
    const client = await this.find(manager, id);
    const now = new Date();
    const expiresAt = new Date(now.getTime() + BECOME_TTL_MS).toISOString();
    const apiKey = await this.queries.transaction(async ({ accounts, audit }) => {
      const key = await accounts.insertKey(
        { userId: client.id, name: 'become', kind: 'impersonation', expiresAt, impersonatorId: principal.userId },
        now.toISOString(),
      );
      await audit.record(context, 'client.become', client.id, { expires_at: expiresAt }, now.toISOString());
      return key;
    });
    return { client: await this.presentOne(client), api_key: apiKey, expires_at: toPortalTimestamp(expiresAt) };
  }

  /** The caller as a manager of clients: the owner, or a client that is an admin somewhere; others are 403. */
  private async manager(principal: Principal): Promise<Manager> {
    if (principal.kind === 'owner') return { principal, adminOf: null };
    const adminOf = await this.queries.adminPublicationIds(principal.userId, principal.accountId);
    if (adminOf.length === 0) throw forbidden('Only the account owner and admins may manage clients');
    return { principal, adminOf: new Set(adminOf) };
  }

  /** The client, if the manager manages it; otherwise 404, as if it did not exist. */
  private async find(manager: Manager, id: number): Promise<User> {
    const client = await this.queries.find(manager.principal.accountId, id, managedBy(manager));
    if (!client) throw notFound(`Client ${id}`);
    return client;
  }

  /** Roles name each publication once, and only publications of the caller's account. */
  private async checkRoles(principal: Principal, roles: RoleInputValue[]): Promise<RoleValue[]> {
    const known = await this.queries.accountPublicationIds(principal.accountId, [...new Set(roles.map((role) => role.publication_id))]);
    const seen = new Set<number>();
    const problems: FieldProblem[] = [];
    roles.forEach((role, index) => {
      const path = `/roles/${index}/publication_id`;
      if (seen.has(role.publication_id)) problems.push({ path, message: `names publication ${role.publication_id} twice` });
      else if (!known.has(role.publication_id)) problems.push({ path, message: `${role.publication_id} is not a publication of this account` });
      seen.add(role.publication_id);
    });
    if (problems.length > 0) throw validationError(problems);
    return roles.map((role) => ({ publication_id: role.publication_id, access_level: role.access_level }));
  }

  private async present(rows: User[]): Promise<ClientView[]> {
    const roles = await this.queries.rolesOf(rows.map((row) => row.id));
    return rows.map((row) => presentClient(row, roles.get(row.id) ?? []));
  }

  private async presentOne(row: User): Promise<ClientView> {
    return (await this.present([row]))[0]!;
  }
}

/** The admin whose reach limits the clients found, or undefined for the owner, who reaches them all. */
function managedBy(manager: Manager): number | undefined {
  return manager.adminOf === null ? undefined : manager.principal.userId;
}

/** Admins change roles only on publications they administer, and never grant the admin level. */
function checkGrants(manager: Manager, current: RoleValue[], next: RoleValue[]): void {
  const adminOf = manager.adminOf;
  if (adminOf === null) return;
  if (next.some((role) => role.access_level === 'admin')) throw forbidden('Only the account owner may grant the admin level');
  const before = new Map(current.map((role) => [role.publication_id, role.access_level]));
  const after = new Map(next.map((role) => [role.publication_id, role.access_level]));
  for (const publicationId of new Set([...before.keys(), ...after.keys()])) {
    if (before.get(publicationId) !== after.get(publicationId) && !adminOf.has(publicationId)) {
      throw forbidden(`You are not an admin of publication ${publicationId}, so you may not change roles on it`);
    }
  }
}

function roleValue(row: RoleRow): RoleValue {
  return { publication_id: row.publication_id, access_level: row.access_level };
}

function sortRoles(roles: RoleValue[]): RoleValue[] {
  return [...roles].sort((a, b) => a.publication_id - b.publication_id).map(({ publication_id, access_level }) => ({ publication_id, access_level }));
}

function sameRoles(a: RoleValue[], b: RoleValue[]): boolean {
  return JSON.stringify(sortRoles(a)) === JSON.stringify(sortRoles(b));
}

export function gravatarUrl(email: string): string {
  return `//www.gravatar.com/avatar/${createHash('md5').update(email.trim().toLowerCase()).digest('hex')}`;
}

export function presentClient(user: User, roles: RoleRow[]): ClientView {
  return {
    id: user.id,
    firstname: user.firstname,
    lastname: user.lastname,
    email: user.email,
    created_at: toPortalTimestamp(user.created_at),
    updated_at: toPortalTimestamp(user.updated_at),
    last_seen_at: toPortalTimestamp(user.last_seen_at),
    sign_in_count: user.sign_in_count,
    gravatar_url: gravatarUrl(user.email),
    roles: roles.map((role) => ({
      id: role.id,
      user_id: role.user_id,
      publication_id: role.publication_id,
      access_level: role.access_level,
      created_at: toPortalTimestamp(role.created_at),
      updated_at: toPortalTimestamp(role.updated_at),
    })),
  };
}
