import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Dialect } from '../../src/db/connection.js';
import { client, createOwner, createPublication, expectError, type Owner, type TestApp, startApp } from './app.js';

export const PORTAL = '/api/portal/v1';

/** The portal's timestamp shape: `YYYY-MM-DD HH:MM:SS`, UTC. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

export type Api = ReturnType<typeof client>;

/** Two accounts on one app: `owner` with two publications, `stranger` with one of its own. */
export interface Tenants {
  t: TestApp;
  owner: Owner;
  api: Api;
  appId: string;
  publicationId: number;
  /** The owner's second publication. */
  secondAppId: string;
  stranger: Owner;
  strangerApi: Api;
  strangerAppId: string;
}

/** Starts an app for the enclosing describe (closed after it) and fills the returned object before its tests run. */
export function useTenants(dialect: Dialect): Tenants {
  const tenants = {} as Tenants;
  before(async () => {
    const t = await startApp(dialect);
    const owner = await createOwner(t.storage);
    const stranger = await createOwner(t.storage);
    const publication = await createPublication(t.storage, owner.accountId);
    Object.assign(tenants, {
      t,
      owner,
      api: client(t.app, owner.apiKey),
      appId: publication.app_id,
      publicationId: publication.id,
      secondAppId: (await createPublication(t.storage, owner.accountId)).app_id,
      stranger,
      strangerApi: client(t.app, stranger.apiKey),
      strangerAppId: (await createPublication(t.storage, stranger.accountId)).app_id,
    });
  });
  after(() => tenants.t.close());
  return tenants;
}

export interface CollectionContract {
  /** The path segment: `categories` or `issues`. */
  path: string;
  /** Every field a record has. */
  fields: string[];
  /** A valid create body; called once per record, so it may vary the name. */
  create(): Record<string, unknown>;
  /** A valid update body and the fields it must change to. */
  update: { body: Record<string, unknown>; expect: Record<string, unknown> };
}

/**
 * The conventions every small per-publication collection follows (CRUD statuses, tenancy, ids, names):
 * registers its tests in the enclosing describe.
 */
export function itFollowsTheCollectionContract(s: Tenants, contract: CollectionContract): void {
  const base = (appId: string) => `${PORTAL}/${contract.path}/${appId}`;
  const create = async () => {
    const response = await s.api.post(base(s.appId), contract.create());
    assert.equal(response.status, 201, response.raw);
    return response.body;
  };

  it('creates (201), reads, lists, updates (200) and deletes (204, then 404)', async () => {
    const body = contract.create();
    const created = await s.api.post(base(s.appId), body);
    assert.equal(created.status, 201, created.raw);
    const record = created.body;
    assert.deepEqual(Object.keys(record).sort(), [...contract.fields].sort());
    assert.equal(typeof record.id, 'number');
    assert.equal(record.publication_id, s.publicationId);
    assert.equal(record.name, String(body.name).trim());
    assert.match(record.created_at, TIMESTAMP);
    assert.match(record.updated_at, TIMESTAMP);

    const url = `${base(s.appId)}/${record.id}`;
    const read = await s.api.get(url);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, record);

    const list = await s.api.get(base(s.appId));
    assert.equal(list.status, 200);
    assert.ok(Array.isArray(list.body));
    assert.deepEqual(
      list.body.find((row: { id: number }) => row.id === record.id),
      record,
    );

    const updated = await s.api.put(url, contract.update.body);
    assert.equal(updated.status, 200, updated.raw);
    assert.deepEqual(updated.body, { ...record, ...contract.update.expect, updated_at: updated.body.updated_at });
    assert.match(updated.body.updated_at, TIMESTAMP);
    assert.deepEqual((await s.api.get(url)).body, updated.body);

    const deleted = await s.api.delete(url);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.raw, '');
    expectError(await s.api.get(url), 404, 'not_found');
    expectError(await s.api.put(url, contract.update.body), 404, 'not_found');
    expectError(await s.api.delete(url), 404, 'not_found');
    assert.ok(!(await s.api.get(base(s.appId))).body.some((row: { id: number }) => row.id === record.id));
  });

  it("keeps each publication's records apart", async () => {
    const record = await create();
    expectError(await s.api.get(`${base(s.secondAppId)}/${record.id}`), 404, 'not_found');
    expectError(await s.api.put(`${base(s.secondAppId)}/${record.id}`, contract.update.body), 404, 'not_found');
    expectError(await s.api.delete(`${base(s.secondAppId)}/${record.id}`), 404, 'not_found');
    assert.ok(!(await s.api.get(base(s.secondAppId))).body.some((row: { id: number }) => row.id === record.id));
  });

  it("answers 404 to another account's key on every operation, and changes nothing", async () => {
    const record = await create();
    const url = `${base(s.appId)}/${record.id}`;
    for (const response of [
      await s.strangerApi.get(base(s.appId)),
      await s.strangerApi.post(base(s.appId), contract.create()),
      await s.strangerApi.get(url),
      await s.strangerApi.put(url, contract.update.body),
      await s.strangerApi.delete(url),
      // Its own publication does not open the owner's records either.
      await s.strangerApi.get(`${base(s.strangerAppId)}/${record.id}`),
      await s.strangerApi.delete(`${base(s.strangerAppId)}/${record.id}`),
    ]) {
      expectError(response, 404, 'not_found');
    }
    assert.deepEqual((await s.api.get(url)).body, record);
  });

  it('answers 404 for an unknown app_id', async () => {
    const unknown = base('no-such-publication');
    expectError(await s.api.get(unknown), 404, 'not_found');
    expectError(await s.api.post(unknown, contract.create()), 404, 'not_found');
    expectError(await s.api.get(`${unknown}/1`), 404, 'not_found');
    expectError(await s.api.put(`${unknown}/1`, contract.update.body), 404, 'not_found');
    expectError(await s.api.delete(`${unknown}/1`), 404, 'not_found');
  });

  it('answers 404 for an unknown id and 400 for a non-numeric or out-of-range one', async () => {
    expectError(await s.api.get(`${base(s.appId)}/999999`), 404, 'not_found');
    for (const id of ['abc', '0', '-1', '1.5', '99999999999']) {
      expectError(await s.api.get(`${base(s.appId)}/${id}`), 400, 'validation_failed');
      expectError(await s.api.delete(`${base(s.appId)}/${id}`), 400, 'validation_failed');
    }
  });

  it('refuses a blank, missing, too long or non-string name with 400', async () => {
    const record = await create();
    for (const name of ['', '   ', 'x'.repeat(201), 42, null]) {
      const problem = expectError(await s.api.post(base(s.appId), { ...contract.create(), name }), 400, 'validation_failed');
      assert.equal(problem.details[0]?.path, '/name');
      expectError(await s.api.put(`${base(s.appId)}/${record.id}`, { name }), 400, 'validation_failed');
    }
    const { name: _omitted, ...withoutName } = contract.create();
    const problem = expectError(await s.api.post(base(s.appId), withoutName), 400, 'validation_failed');
    assert.deepEqual(problem.details[0], { path: '/name', message: 'is required' });
    assert.deepEqual((await s.api.get(`${base(s.appId)}/${record.id}`)).body, record);
  });

  it('answers 401 without a key', async () => {
    expectError(await client(s.t.app).get(base(s.appId)), 401, 'unauthorized');
    expectError(await client(s.t.app).post(base(s.appId), contract.create()), 401, 'unauthorized');
  });
}
