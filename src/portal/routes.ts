import type { FastifyPluginAsync } from 'fastify';
import type { AccountService } from '../accounts/service.js';
import { requireApiKey } from '../accounts/api-key-hook.js';
import { Article } from './articles/schemas.js';
import { articleRoutes } from './articles/routes.js';
import type { ArticleService } from './articles/service.js';
import { auditRoutes } from './audit/routes.js';
import type { AuditService } from './audit/service.js';
import { Category, registerCategoryRoutes } from './categories/routes.js';
import type { CategoryService } from './categories/service.js';
import { clientRoutes } from './clients/routes.js';
import { Client } from './clients/schemas.js';
import type { ClientService } from './clients/service.js';
import { registerFeedRoutes } from './feeds/routes.js';
import { RssFeed, SyncResult } from './feeds/schemas.js';
import type { FeedService } from './feeds/service.js';
import { Issue, registerIssueRoutes } from './issues/routes.js';
import type { IssueService } from './issues/service.js';
import { publicationRoutes } from './publications/routes.js';
import type { PublicationService } from './publications/service.js';

export interface PortalServices {
  accounts: AccountService;
  publications: PublicationService;
  articles: ArticleService;
  categories: CategoryService;
  issues: IssueService;
  clients: ClientService;
  audit: AuditService;
  feeds: FeedService;
}

/** Schemas that responses refer to by $id; the app adds them at its root so the OpenAPI document names them. */
export const portalSchemas = [Article, Category, Issue, Client, RssFeed, SyncResult];

/** The Publication Portal API, mounted under /api/portal/v1; every route needs an API key. */
export const portalRoutes: FastifyPluginAsync<PortalServices> = async (app, services) => {
  app.addHook('onRequest', requireApiKey(services.accounts, { allowBearer: true, publicationParam: 'app_id' }));
  await app.register(publicationRoutes, { publications: services.publications });
  await app.register(articleRoutes, { articles: services.articles });
  registerCategoryRoutes(app, services.categories);
  registerIssueRoutes(app, services.issues);
  registerFeedRoutes(app, services.feeds);
  await app.register(clientRoutes, { clients: services.clients });
  await app.register(auditRoutes, { audit: services.audit });
};
