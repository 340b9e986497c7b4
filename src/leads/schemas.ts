import { Type } from '@sinclair/typebox';
import { Nullable } from '../http/schemas.js';

export const JOB_STATUSES = ['pending', 'scraping', 'generating', 'sending', 'completed', 'failed', 'rejected'] as const;

export const ProcessLeadBody = Type.Object({
  firstName: Type.String({ maxLength: 100, description: 'lead first name (trimmed; 1-100 characters)' }),
  lastName: Type.String({ maxLength: 100, description: 'lead last name (trimmed; 1-100 characters)' }),
  email: Type.String({ maxLength: 320, description: 'lead business email' }),
  templateId: Type.Optional(
    Type.String({ format: 'uuid', description: "one of the account's templates; default: the account's default template, else the built-in one" }),
  ),
});

export const ProcessLeadHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'the same key and body within 24 h replay the first response; another body is 409' })),
  prefer: Type.Optional(Type.String({ description: '`respond-async`: answer 202 at once; read the result at GET /api/client/jobs/{id}' })),
});

export const LeadSuccess = Type.Object(
  {
    success: Type.Literal(true),
    jobId: Type.String({ format: 'uuid' }),
    emailSubject: Type.String(),
    emailBody: Type.String(),
    emailDraft: Type.String({ description: 'legacy: the subject, a blank line, the body' }),
    message: Type.String(),
  },
  { title: 'Generated' },
);

export const LeadRejected = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.String({ description: 'why the address is not a business email' }),
    businessEmail: Type.Literal(false),
    reason: Type.String({ description: 'invalid_syntax, free_provider, disposable or no_mail_server' }),
    jobId: Type.String({ format: 'uuid', description: 'the job, ended `rejected`' }),
  },
  { title: 'Not a business email' },
);

export const LeadQueued = Type.Object({
  success: Type.Literal(true),
  jobId: Type.String({ format: 'uuid' }),
  status: Type.Literal('pending'),
});

export const LeadFailed = Type.Object({
  success: Type.Literal(false),
  status: Type.Literal('error'),
  error: Type.String({ description: 'generation_failed' }),
  message: Type.String(),
  details: Type.Array(Type.Object({ path: Type.String(), message: Type.String() })),
  jobId: Type.String({ format: 'uuid', description: 'the job, ended `failed`' }),
});

export const Job = Type.Object({
  id: Type.String({ format: 'uuid' }),
  first_name: Type.String(),
  last_name: Type.String(),
  email: Type.String(),
  domain: Type.String(),
  status: Type.Union(JOB_STATUSES.map((status) => Type.Literal(status))),
  created_at: Type.String({ description: 'ISO 8601' }),
  updated_at: Type.String({ description: 'ISO 8601' }),
  completed_at: Nullable(Type.String({ description: 'ISO 8601; when the job ended (completed, failed or rejected)' })),
  error_message: Nullable(Type.String()),
  batch_id: Nullable(Type.String({ format: 'uuid', description: 'the batch the lead came in, if any' })),
});

const CompanyLinks = Type.Object({
  website: Nullable(Type.String()),
  linkedin: Type.Optional(Type.String()),
  twitter: Type.Optional(Type.String()),
  facebook: Type.Optional(Type.String()),
  instagram: Type.Optional(Type.String()),
  youtube: Type.Optional(Type.String()),
  github: Type.Optional(Type.String()),
});

export const Company = Type.Object({
  name: Type.String(),
  description: Nullable(Type.String()),
  product_description: Nullable(Type.String()),
  industry: Type.Array(Type.String()),
  logo: Nullable(Type.String()),
  links: CompanyLinks,
  language: Nullable(Type.String()),
  source: Type.Union([Type.Literal('site'), Type.Literal('domain')], {
    description: 'site: read from the company website; domain: only what the domain tells',
  }),
});

export const JobDetail = Type.Composite([
  Job,
  Type.Object({
    template_id: Nullable(Type.String()),
    send_to: Nullable(Type.String({ description: 'where the generated email was delivered (the dashboard’s demo flow), if anywhere' })),
    email_subject: Nullable(Type.String()),
    email_body: Nullable(Type.String()),
    company: Nullable(Company),
    research_note: Nullable(Type.String({ description: 'why the research fell back to the domain, when it did' })),
    generator: Nullable(Type.String({ description: 'builtin or llm' })),
    rejection_reason: Nullable(Type.String()),
    transitions: Type.Array(Type.Object({ status: Type.String(), at: Type.String() }), { description: 'every status the job passed, with its time' }),
  }),
]);

export const JobsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'jobs per page (1-100)' }),
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  status: Type.Optional(
    Type.Union(
      [...JOB_STATUSES, 'processing'].map((status) => Type.Literal(status)),
      { description: 'a status, or processing (scraping, generating or sending)' },
    ),
  ),
  batch: Type.Optional(Type.String({ format: 'uuid', description: 'only the jobs of this batch' })),
});

export const JobsPage = Type.Object({
  jobs: Type.Array(Job),
  pagination: Type.Object({ total: Type.Integer(), page: Type.Integer(), limit: Type.Integer(), pages: Type.Integer() }),
});

export const JobParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
