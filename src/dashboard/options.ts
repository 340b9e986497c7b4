import type { AccountService } from '../accounts/service.js';
import type { SessionService } from '../accounts/sessions.js';
import type { PlanRateLimitOptions } from '../leads/rate-limit.js';
import type { LeadBatchService } from '../leads/batches/service.js';
import type { LeadService } from '../leads/service.js';
import type { TemplateService } from '../leads/templates/service.js';
import type { ArticleService } from '../portal/articles/service.js';
import type { CategoryService } from '../portal/categories/service.js';
import type { ClientService } from '../portal/clients/service.js';
import type { FeedService } from '../portal/feeds/service.js';
import type { PublicationService } from '../portal/publications/service.js';
import type { WebhookService } from '../webhooks/service.js';

/** What the dashboard's scope and each of its pages are given by the composition root: the services and settings. */
export interface DashboardOptions {
  accounts: AccountService;
  sessions: SessionService;
  publications: PublicationService;
  articles: ArticleService;
  categories: CategoryService;
  feeds: FeedService;
  clients: ClientService;
  leads: LeadService;
  batches: LeadBatchService;
  templates: TemplateService;
  webhooks: WebhookService;
  /** ALLOW_SIGNUP: whether anyone may create an account from the sign-up page. */
  allowSignup: boolean;
  /** SMTP_URL is set: the try-it form offers "send it to me". */
  canSendEmail: boolean;
  /** The plans' limits (shown on Settings) and the lead API's per-minute limit, which the try-it form spends too. */
  leadRateLimit: PlanRateLimitOptions;
}
