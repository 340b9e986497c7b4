import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AccessLevel, ClientAccessLevel } from '../../src/portal/permissions.js';
import { client, createOwner, createPublication, DIALECTS, expectError, type Response, startApp, type TestApp } from '../helpers/app.js';
import { type Api, PORTAL } from '../helpers/portal.js';
import { createClientUser } from '../helpers/roles.js';

// The role table of issue 3, cell by cell, for articles, categories and issues (feeds do not exist yet):
//                                     owner admin editor author viewer
// read articles, categories, issues    yes   yes   yes    yes    yes
// create articles, import              yes   yes   yes    yes    no
// update or delete any article         yes   yes   yes    own    no
// manage categories, issues            yes   yes   yes    no     no
// Forbidden actions on a visible publication are 403; a publication the user holds no role on is 404.

const LEVELS: AccessLevel[] = ['owner', 'admin', 'editor', 'author', 'viewer'];
const MAY_WRITE_ARTICLES = new Set<AccessLevel>(['owner', 'admin', 'editor', 'author']);
const MAY_EDIT_ALL = new Set<AccessLevel>(['owner', 'admin', 'editor']);

interface Actor {
  level: AccessLevel;
  userId: number;
  api: Api;
}

interface Fixture {
  t: TestApp;
  /** The publication every client holds a role on. */
  appId: string;
  publicationId: number;
  /** A second publication of the same account that no client holds a role on. */
  otherAppId: string;
  actors: Record<AccessLevel, Actor>;
  /** Records of each publication, made by the owner. */
  records: Record<'a' | 'b', { articleId: number; categoryId: number; issueId: number }>;
}

let counter = 0;
const unique = (stem: string) => `${stem} ${++counter}`;

function expectStatus(response: Response, status: number): void {
  assert.equal(response.status, status, `expected ${status}, got ${response.status} ${response.raw.slice(0, 300)}`);
}

for (const dialect of DIALECTS) {
  describe(`the role table (${dialect})`, () => {
    const f = {} as Fixture;
    const articles = (appId = f.appId) => `${PORTAL}/articles/${appId}`;
    const categories = (appId = f.appId) => `${PORTAL}/categories/${appId}`;
    const issues = (appId = f.appId) => `${PORTAL}/issues/${appId}`;

    const createArticleAs = async (actor: Actor, title = unique('Article')) => {
      const response = await actor.api.post(articles(), { title });
      expectStatus(response, 201);
      return response.body as { id: number; title: string; author_id: number };
    };
    const createCategory = async () => {
      const response = await f.actors.owner.api.post(categories(), { name: unique('Category') });
      expectStatus(response, 201);
      return response.body as { id: number; name: string };
    };
    const createIssue = async () => {
      const response = await f.actors.owner.api.post(issues(), { name: unique('Issue') });
      expectStatus(response, 201);
      return response.body as { id: number; name: string };
    };

    before(async () => {
      f.t = await startApp(dialect);
      const owner = await createOwner(f.t.storage);
      const a = await createPublication(f.t.storage, owner.accountId);
      const b = await createPublication(f.t.storage, owner.accountId);
      Object.assign(f, { appId: a.app_id, publicationId: a.id, otherAppId: b.app_id });
      f.actors = { owner: { level: 'owner', userId: owner.userId, api: client(f.t.app, owner.apiKey) } } as Fixture['actors'];
      for (const level of ['admin', 'editor', 'author', 'viewer'] as ClientAccessLevel[]) {
        const user = await createClientUser(f.t.storage, owner.accountId, [{ publicationId: a.id, accessLevel: level }]);
        f.actors[level] = { level, userId: user.userId, api: client(f.t.app, user.apiKey) };
      }
      const recordsOf = async (appId: string) => {
        const api = f.actors.owner.api;
        const article = await api.post(articles(appId), { title: unique('Owner article') });
        const category = await api.post(categories(appId), { name: unique('Category') });
        const issue = await api.post(issues(appId), { name: unique('Issue') });
        for (const response of [article, category, issue]) expectStatus(response, 201);
        return { articleId: article.body.id, categoryId: category.body.id, issueId: issue.body.id };
      };
      f.records = { a: await recordsOf(a.app_id), b: await recordsOf(b.app_id) };
    });
    after(() => f.t.close());

    for (const level of LEVELS) {
      describe(level, () => {
        const actor = () => f.actors[level];

        it('reads articles, categories and issues (list, page, get): 200', async () => {
          const { api } = actor();
          const { articleId, categoryId, issueId } = f.records.a;
          const list = await api.get(articles());
          expectStatus(list, 200);
          assert.ok(list.body.some((row: { id: number }) => row.id === articleId));
          const page = await api.get(`${articles()}/page/1?per_page=100`);
          expectStatus(page, 200);
          assert.ok(page.body.records.some((row: { id: number }) => row.id === articleId));
          expectStatus(await api.get(`${articles()}/${articleId}`), 200);
          expectStatus(await api.get(categories()), 200);
          expectStatus(await api.get(`${categories()}/${categoryId}`), 200);
          expectStatus(await api.get(issues()), 200);
          expectStatus(await api.get(`${issues()}/${issueId}`), 200);
        });

        const mayWrite = MAY_WRITE_ARTICLES.has(level);
        it(`creates articles and imports them: ${mayWrite ? '201, recording the author' : '403'}`, async () => {
          const { api, userId } = actor();
          const title = unique('New article');
          const created = await api.post(articles(), { title });
          const imported = await api.post(`${articles()}/flexpdf-import`, { articles: [{ title: `${title} (pdf)` }] });
          if (mayWrite) {
            expectStatus(created, 201);
            assert.equal(created.body.author_id, userId);
            expectStatus(imported, 201);
            assert.equal(imported.body.count, 1);
            assert.equal(imported.body.articles[0].author_id, userId);
          } else {
            expectError(created, 403, 'forbidden');
            expectError(imported, 403, 'forbidden');
            const titles = (await api.get(articles())).body.map((row: { title: string }) => row.title);
            assert.ok(!titles.some((name: string) => name.startsWith(title)), 'nothing was created');
          }
        });

        const mayEditAll = MAY_EDIT_ALL.has(level);
        it(`updates and deletes another user's article: ${mayEditAll ? '200 and 204' : '403'}`, async () => {
          const { api } = actor();
          // The owner's articles are someone else's for every client; the owner gets one an editor wrote.
          const article = await createArticleAs(level === 'owner' ? f.actors.editor : f.actors.owner);
          const url = `${articles()}/${article.id}`;
          const updated = await api.put(url, { title: 'Changed by someone else' });
          if (mayEditAll) {
            expectStatus(updated, 200);
            assert.equal(updated.body.title, 'Changed by someone else');
            assert.equal(updated.body.author_id, article.author_id, 'the author stays the one who wrote it');
            expectStatus(await api.delete(url), 204);
            expectError(await f.actors.owner.api.get(url), 404, 'not_found');
          } else {
            expectError(updated, 403, 'forbidden');
            expectError(await api.delete(url), 403, 'forbidden');
            const kept = await f.actors.owner.api.get(url);
            expectStatus(kept, 200);
            assert.equal(kept.body.title, article.title);
          }
        });

        if (mayWrite) {
          it('updates and deletes its own article: 200 and 204', async () => {
            const { api } = actor();
            const article = await createArticleAs(actor());
            const url = `${articles()}/${article.id}`;
            const updated = await api.put(url, { title: 'Changed by its author', visible: false });
            expectStatus(updated, 200);
            assert.equal(updated.body.title, 'Changed by its author');
            expectStatus(await api.delete(url), 204);
            expectError(await api.get(url), 404, 'not_found');
          });
        }

        for (const [noun, path, create, body] of [
          ['categories', categories, createCategory, () => ({ name: unique('Category') })],
          ['issues', issues, createIssue, () => ({ name: unique('Issue'), date: '2026-03-01' })],
        ] as const) {
          it(`creates, updates and deletes ${noun}: ${mayEditAll ? '201, 200 and 204' : '403'}`, async () => {
            const { api } = actor();
            const existing = await create();
            const url = `${path()}/${existing.id}`;
            const created = await api.post(path(), body());
            const updated = await api.put(url, body());
            const deleted = await api.delete(url);
            if (mayEditAll) {
              expectStatus(created, 201);
              expectStatus(updated, 200);
              expectStatus(deleted, 204);
              expectError(await api.get(url), 404, 'not_found');
            } else {
              for (const response of [created, updated, deleted]) expectError(response, 403, 'forbidden');
              const kept = await api.get(url);
              expectStatus(kept, 200);
              assert.equal(kept.body.name, existing.name);
              assert.equal((await api.get(path())).body.length, (await f.actors.owner.api.get(path())).body.length);
            }
          });
        }

        if (level !== 'owner') {
          it('finds nothing (404) in a publication of its account it holds no role on, and lists only its own', async () => {
            const { api } = actor();
            const b = f.otherAppId;
            const { articleId, categoryId, issueId } = f.records.b;
            for (const response of [
              await api.get(articles(b)),
              await api.get(`${articles(b)}/page/1`),
              await api.get(`${articles(b)}/${articleId}`),
              await api.post(articles(b), { title: 'Not here' }),
              await api.post(`${articles(b)}/flexpdf-import`, { articles: [{ title: 'Not here' }] }),
              await api.put(`${articles(b)}/${articleId}`, { title: 'Not here' }),
              await api.delete(`${articles(b)}/${articleId}`),
              await api.get(categories(b)),
              await api.get(`${categories(b)}/${categoryId}`),
              await api.post(categories(b), { name: 'Not here' }),
              await api.put(`${categories(b)}/${categoryId}`, { name: 'Not here' }),
              await api.delete(`${categories(b)}/${categoryId}`),
              await api.get(issues(b)),
              await api.get(`${issues(b)}/${issueId}`),
              await api.post(issues(b), { name: 'Not here' }),
              await api.put(`${issues(b)}/${issueId}`, { name: 'Not here' }),
              await api.delete(`${issues(b)}/${issueId}`),
            ]) {
              expectError(response, 404, 'not_found');
            }
            const owner = f.actors.owner.api;
            expectStatus(await owner.get(`${articles(b)}/${articleId}`), 200);
            expectStatus(await owner.get(`${categories(b)}/${categoryId}`), 200);
            expectStatus(await owner.get(`${issues(b)}/${issueId}`), 200);

            const publications = await api.get(`${PORTAL}/publications`);
            expectStatus(publications, 200);
            assert.deepEqual(
              publications.body.map((row: { id: number; app_id: string; access_level: string }) => [row.id, row.app_id, row.access_level]),
              [[f.publicationId, f.appId, level]],
            );
          });
        }
      });
    }

    it('shows the owner every publication of the account, as owner', async () => {
      const publications = await f.actors.owner.api.get(`${PORTAL}/publications`);
      assert.deepEqual(
        publications.body.map((row: { app_id: string; access_level: string }) => [row.app_id, row.access_level]),
        [
          [f.appId, 'owner'],
          [f.otherAppId, 'owner'],
        ],
      );
    });

    it('lets an editor change and delete what an author wrote, and an author not what another author wrote', async () => {
      const owner = await f.t.storage.db.selectFrom('publications').select('account_id').where('id', '=', f.publicationId).executeTakeFirstOrThrow();
      const second = await createClientUser(f.t.storage, owner.account_id, [{ publicationId: f.publicationId, accessLevel: 'author' }]);
      const secondAuthor: Actor = { level: 'author', userId: second.userId, api: client(f.t.app, second.apiKey) };
      const article = await createArticleAs(f.actors.author);
      const url = `${articles()}/${article.id}`;
      expectError(await secondAuthor.api.put(url, { title: 'Not mine' }), 403, 'forbidden');
      expectError(await secondAuthor.api.delete(url), 403, 'forbidden');
      expectStatus(await f.actors.editor.api.put(url, { title: 'Edited' }), 200);
      expectStatus(await f.actors.editor.api.delete(url), 204);
    });

    it("ignores a role on another account's publication: the client still sees only 404s there", async () => {
      const stranger = await createOwner(f.t.storage);
      const theirs = await createPublication(f.t.storage, stranger.accountId);
      const owner = await f.t.storage.db.selectFrom('publications').select('account_id').where('id', '=', f.publicationId).executeTakeFirstOrThrow();
      // A role no API lets anyone create: a client of this account on a publication of another.
      const crossing = await createClientUser(f.t.storage, owner.account_id, [{ publicationId: theirs.id, accessLevel: 'admin' }]);
      const api = client(f.t.app, crossing.apiKey);
      expectError(await api.get(articles(theirs.app_id)), 404, 'not_found');
      expectError(await api.post(articles(theirs.app_id), { title: 'Intruder' }), 404, 'not_found');
      expectError(await api.post(categories(theirs.app_id), { name: 'Intruder' }), 404, 'not_found');
      assert.deepEqual((await api.get(`${PORTAL}/publications`)).body, []);
    });
  });
}
