import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { buildApp, RESEARCH_USER_AGENT } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { type Dialect, openStorage, type Storage } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createLlmClient } from '../../src/leads/generation/llm.js';
import { type LeadDomainDeps, wireLeadDomain } from '../../src/leads/wiring.js';
import { createSafeFetcher } from '../../src/net/safe-fetch.js';
import { type client, createTestDatabase } from './app.js';
import { html, json, type LocalServer } from './local-server.js';

export const LEADS = '/api/client';

/** Settings that point company research at a local server playing every company's site (`/{domain}/`). */
export function siteEnv(site: LocalServer, extra: Record<string, string> = {}): Record<string, string> {
  return { COMPANY_SITE_URL: `${site.base}/{domain}/`, OUTBOUND_ALLOW: site.hostPort, ...extra };
}

/** A realistic company home page with JSON-LD, OpenGraph and a lead paragraph. */
export function companyHome(options: { name: string; description: string; product: string; lang?: string }): string {
  const jsonLd = JSON.stringify({
    '@context': 'https://schema.org',
    '@type': 'Organization',
    name: options.name,
    description: options.description,
    logo: '/logo.png',
  });
  return `<!doctype html><html lang="${options.lang ?? 'en'}"><head><meta charset="utf-8">
<title>${options.name} | Home</title>
<meta name="description" content="${options.description}">
<meta property="og:site_name" content="${options.name}">
<script type="application/ld+json">${jsonLd}</script>
</head><body><nav><a href="/">Home</a></nav>
<main><h1>${options.product}</h1><p>${options.description}</p></main>
<footer><a href="https://www.linkedin.com/company/${options.name.toLowerCase().replace(/\W+/g, '-')}">LinkedIn</a></footer></body></html>`;
}

/** Serves a company home page at /{domain}/ of the local site. */
export function serveCompany(site: LocalServer, domain: string, page: string): void {
  site.routes.set(`/${domain}/`, (_request, response) => html(response, page));
}

/** An OpenAI chat-completions answer whose message content is `content`. */
export function chatAnswer(response: ServerResponse, content: string): void {
  json(response, {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'test-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
  });
}

type Api = ReturnType<typeof client>;

/** Polls a job until it reaches one of `statuses` (the worker runs it in the background). */
export async function waitForJob(api: Api, id: string, statuses: string[] = ['completed', 'failed', 'rejected'], timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await api.get(`${LEADS}/jobs/${id}`);
    if (response.status !== 200) throw new Error(`GET job ${id}: ${response.status} ${response.raw}`);
    if (statuses.includes(response.body.status)) return response.body;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${response.body.status} after ${timeoutMs} ms`);
    await sleep(20);
  }
}

export function lead(email: string, extra: Record<string, unknown> = {}) {
  return { firstName: 'Ada', lastName: 'Lovelace', email, ...extra };
}

/** Several app instances on one database (a SQLite file, or one PostgreSQL schema), as several servers would run. */
export async function startInstances(dialect: Dialect, count: number, env: Record<string, string>) {
  const folder = await mkdtemp(join(tmpdir(), 'masthead-instances-'));
  const database = dialect === 'sqlite' ? { url: join(folder, 'shared.sqlite'), drop: async () => undefined } : await createTestDatabase(dialect);
  const instances: { app: FastifyInstance; storage: Storage }[] = [];
  try {
    for (let index = 0; index < count; index += 1) {
      const config = loadConfig({ ...env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
      const storage = openStorage(config.databaseUrl);
      await migrateToLatest(storage.db, storage.dialect);
      const app = await buildApp({ config, storage, logRequests: false });
      await app.ready();
      instances.push({ app, storage });
    }
  } catch (error) {
    for (const instance of instances) await instance.app.close().then(() => instance.storage.close());
    await database.drop();
    throw error;
  }
  return {
    instances,
    async close() {
      for (const instance of instances) {
        await instance.app.close();
        await instance.storage.close();
      }
      await database.drop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

/**
 * Another instance's lead worker on the same database, wired as the app wires it (wireLeadDomain) but with the lease
 * the test gives: with the app started with LEAD_WORKER=false, the jobs the app queues are run by these workers only.
 */
export function startLeadWorker(
  instance: { config: Config; storage: Storage; app: FastifyInstance },
  worker: NonNullable<LeadDomainDeps['worker']>,
  extra: Pick<LeadDomainDeps, 'mailServers' | 'onJobEnded' | 'onBatchCompleted'> & { checkMx?: boolean } = {},
) {
  const { config } = instance;
  const fetcher = createSafeFetcher({ allow: config.outboundAllow, userAgent: RESEARCH_USER_AGENT });
  const llm = config.llm.baseUrl ? createLlmClient({ baseUrl: config.llm.baseUrl, apiKey: config.llm.apiKey, model: config.llm.model }) : undefined;
  const leads = wireLeadDomain({
    storage: instance.storage,
    settings: { ...config.leads, worker: true, checkMx: extra.checkMx ?? config.leads.checkMx },
    companySiteUrl: config.companySiteUrl,
    fetcher,
    llm,
    mailer: undefined,
    log: instance.app.log,
    worker,
    ...extra,
  });
  leads.start();
  return {
    async close() {
      await leads.stop();
      await Promise.all([fetcher.close(), llm?.close()]);
    },
  };
}
