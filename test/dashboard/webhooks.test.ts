import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, createPublication, DIALECTS, startApp, type TestApp } from '../helpers/app.js';
import { createClientUser } from '../helpers/roles.js';
import { DAY_MS, startReceiver, WEBHOOKS } from '../helpers/webhooks.js';
import { decodeEntities, expectPage, expectRedirect, fieldError, PASSWORD, pageClient, signIn, signUp } from './helpers.js';

let addressCounter = 0;
const nextAddress = () => `10.8.${Math.floor(++addressCounter / 250)}.${addressCounter % 250}`;

for (const dialect of DIALECTS) {
  describe(`dashboard webhooks pages (${dialect})`, () => {
    let t: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    before(async () => {
      receiver = await startReceiver();
      t = await startApp(dialect, { OUTBOUND_ALLOW: receiver.server.hostPort, WEBHOOK_WORKER: 'off' });
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });
    const browser = () => pageClient(t.app, { remoteAddress: nextAddress() });

    it('adds an endpoint (secret shown once), sends a test event, shows the delivery log, sends again, disables, enables, deletes', async () => {
      const owner = browser();
      await signUp(owner);
      let page = expectPage(await owner.get('/webhooks'), 200);
      assert.match(page, /<a href="\/webhooks" aria-current="page">Webhooks<\/a>/);
      assert.match(page, /No endpoints yet/);

      // Problems are shown at their fields.
      page = expectPage(await owner.post('/webhooks', { url: 'https://10.0.0.1/hook', description: '', events: 'job.completed' }), 400);
      assert.match(fieldError(page, 'field-url') ?? '', /private/);
      page = expectPage(await owner.post('/webhooks', { url: receiver.url('/dash'), description: '' }), 400);
      assert.match(decodeEntities(page), /<a href="#field-events">Events: Choose at least one<\/a>/);
      assert.match(page, /id="field-events-error"/);

      page = expectPage(
        await owner.post('/webhooks', { url: receiver.url('/dash'), description: 'CRM', events: ['job.completed', 'feed.failed'] }),
        201,
      );
      const secret = /<output id="new-secret"[^>]*>(whsec_[^<]+)<\/output>/.exec(page)?.[1];
      assert.ok(secret, 'the secret is shown once');
      receiver.expect('/dash', decodeEntities(secret), [500]);
      const id = Number(/href="\/webhooks\/(\d+)"/.exec(page)?.[1]);
      page = expectPage(await owner.get('/webhooks'), 200);
      assert.doesNotMatch(page, /whsec_/, 'never shown again');
      assert.match(page, /job\.completed, feed\.failed/);

      page = expectPage(await owner.get(`/webhooks/${id}`), 200);
      assert.match(page, /No deliveries yet/);
      expectRedirect(await owner.post(`/webhooks/${id}/test`), `/webhooks/${id}?notice=webhook-test-queued`);
      assert.equal(await t.app.webhookWorker.runDue(), 1);
      page = decodeEntities(expectPage(await owner.get(`/webhooks/${id}`), 200));
      assert.match(page, /webhook\.test/);
      assert.match(page, /<span class="badge pending">pending<\/span>/);
      assert.match(page, /HTTP 500 in \d+ ms/);
      assert.match(page, /receiver says no/);

      // Send again: at once, and this time the receiver takes it.
      const retry = /action="(\/webhooks\/\d+\/deliveries\/\d+\/retry)"/.exec(page)?.[1];
      assert.ok(retry);
      expectRedirect(await owner.post(retry), `/webhooks/${id}?notice=delivery-queued`);
      assert.equal(await t.app.webhookWorker.runDue(), 1);
      page = expectPage(await owner.get(`/webhooks/${id}`), 200);
      assert.match(page, /<span class="badge succeeded">succeeded<\/span>/);
      assert.match(page, /HTTP 200 in \d+ ms/);
      assert.equal(receiver.at('/dash').length, 2);
      assert.ok(receiver.at('/dash').every((request) => request.verifyError === undefined));

      expectRedirect(await owner.post(`/webhooks/${id}/disable`), `/webhooks/${id}?notice=webhook-disabled`);
      page = expectPage(await owner.get(`/webhooks/${id}?notice=webhook-disabled`), 200);
      assert.match(page, /<span class="badge disabled">disabled<\/span>/);
      assert.doesNotMatch(page, /Send a test event/);
      expectRedirect(await owner.post(`/webhooks/${id}/enable`), `/webhooks/${id}?notice=webhook-enabled`);

      page = expectPage(await owner.post(`/webhooks/${id}/rotate`), 200);
      const rotated = /<output id="new-secret"[^>]*>(whsec_[^<]+)<\/output>/.exec(page)?.[1];
      assert.ok(rotated && rotated !== secret);

      const deliveryIds = (await t.storage.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id).execute()).map(
        (row) => row.id,
      );
      assert.equal(deliveryIds.length, 1);
      expectRedirect(await owner.post(`/webhooks/${id}/delete`), '/webhooks?notice=webhook-deleted');
      // Its log goes with it.
      assert.equal((await t.storage.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id).execute()).length, 0);
      assert.equal((await t.storage.db.selectFrom('webhook_attempts').select('id').where('delivery_id', 'in', deliveryIds).execute()).length, 0);
      expectPage(await owner.get(`/webhooks/${id}`), 404);
      expectPage(await owner.get('/webhooks/nothing/here'), 404);
    });

    it('tells the owner on every page when Masthead disabled an endpoint, and keeps other accounts and clients out', async () => {
      const owner = browser();
      const { email, apiKey } = await signUp(owner);
      const api = client(t.app, apiKey);
      const created = await api.post(WEBHOOKS, { url: receiver.url('/dead'), events: ['job.failed'] });
      assert.equal(created.status, 201, created.raw);
      receiver.expect('/dead', created.body.secret, [], 500);
      assert.equal((await api.post(`${WEBHOOKS}/${created.body.id}/test`)).status, 202);
      const t0 = Date.now();
      assert.equal(await t.app.webhookWorker.runDue(new Date(t0)), 1);
      assert.doesNotMatch(expectPage(await owner.get('/publications'), 200), /webhook endpoint was disabled/);
      await api.post(`${WEBHOOKS}/${created.body.id}/test`);
      assert.equal(await t.app.webhookWorker.runDue(new Date(t0 + 6 * DAY_MS)), 2);

      const banner = expectPage(await owner.get('/publications'), 200);
      assert.match(banner, /A webhook endpoint was disabled\s+after its deliveries failed for days: <a href="\/webhooks">see Webhooks<\/a>/);
      const page = decodeEntities(expectPage(await owner.get('/webhooks'), 200));
      assert.match(page, /was disabled/);
      assert.match(page, /every delivery attempt failed for 5 days/);

      // Another account's endpoint is a 404 page; a client of the account gets a 403 page and no menu entry.
      const stranger = browser();
      await signUp(stranger);
      expectPage(await stranger.get(`/webhooks/${created.body.id}`), 404);
      expectPage(await stranger.post(`/webhooks/${created.body.id}/delete`), 404);
      const user = await t.storage.db.selectFrom('users').select(['account_id']).where('email', '=', email).executeTakeFirstOrThrow();
      const publication = await createPublication(t.storage, user.account_id);
      const clientUser = await createClientUser(t.storage, user.account_id, [{ publicationId: publication.id, accessLevel: 'admin' }], {
        password: PASSWORD,
      });
      const member = browser();
      await signIn(member, clientUser.email);
      const clientPage = expectPage(await member.get('/publications'), 200);
      assert.doesNotMatch(clientPage, /href="\/webhooks"/);
      expectPage(await member.get('/webhooks'), 403);
      assert.equal((await api.get(`${WEBHOOKS}/${created.body.id}`)).body.enabled, false);
    });
  });
}
