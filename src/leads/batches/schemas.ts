import { Type } from '@sinclair/typebox';
import { Nullable } from '../../http/schemas.js';
import { Job, JOB_STATUSES, ProcessLeadBody } from '../schemas.js';
import { MAX_BATCH_LEADS, MAX_BATCH_NAME_LENGTH } from './limits.js';

const StatusCounts = Type.Object(Object.fromEntries(JOB_STATUSES.map((status) => [status, Type.Integer()])));

export const BatchBody = Type.Object({
  leads: Type.Array(ProcessLeadBody, {
    minItems: 1,
    maxItems: MAX_BATCH_LEADS,
    description: `1-${MAX_BATCH_LEADS} leads, each as process-lead takes it`,
  }),
  templateId: Type.Optional(Type.String({ format: 'uuid', description: 'the template of every lead that names none' })),
  name: Type.Optional(Type.String({ maxLength: MAX_BATCH_NAME_LENGTH, description: 'a name for people (the dashboard shows it)' })),
});

export const BatchHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'the same key and body within 24 h replay the first response; another body is 409' })),
});

export const Batch = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Nullable(Type.String()),
  status: Type.Union([Type.Literal('processing'), Type.Literal('completed')], { description: 'completed once every job ended' }),
  template_id: Nullable(Type.String()),
  total: Type.Integer({ description: 'leads sent' }),
  accepted: Type.Integer({ description: 'leads that became jobs (rejected addresses included)' }),
  not_accepted: Type.Array(
    Type.Object({
      position: Type.Integer({ description: 'the lead’s place in the list sent, from 1' }),
      first_name: Type.String(),
      last_name: Type.String(),
      email: Type.String(),
      reason: Type.Literal('quota_exceeded'),
      message: Type.String(),
    }),
    { description: 'the leads the monthly quota left out (no job, not counted)' },
  ),
  counts: StatusCounts,
  progress: Type.Object({ ended: Type.Integer(), jobs: Type.Integer(), percent: Type.Integer({ minimum: 0, maximum: 100 }) }),
  created_at: Type.String({ description: 'ISO 8601' }),
  completed_at: Nullable(Type.String({ description: 'ISO 8601; when the last job ended' })),
});

const Pagination = Type.Object({ total: Type.Integer(), page: Type.Integer(), limit: Type.Integer(), pages: Type.Integer() });

export const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
});

export const BatchesPage = Type.Object({ batches: Type.Array(Batch), pagination: Pagination });
export const BatchPage = Type.Object({ batch: Batch, jobs: Type.Array(Job), pagination: Pagination });
export const BatchParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const ResultsQuery = Type.Object({
  bom: Type.Optional(Type.Boolean({ description: 'start the CSV with a UTF-8 byte order mark (for spreadsheets)', default: false })),
});

export const BatchResult = Type.Object({
  position: Type.Integer(),
  first_name: Type.String(),
  last_name: Type.String(),
  email: Type.String(),
  status: Type.Union([...JOB_STATUSES, 'not_accepted'].map((status) => Type.Literal(status))),
  job_id: Nullable(Type.String()),
  company_name: Nullable(Type.String()),
  company_description: Nullable(Type.String()),
  company_website: Nullable(Type.String()),
  email_subject: Nullable(Type.String()),
  email_body: Nullable(Type.String()),
  error: Nullable(Type.String()),
  completed_at: Nullable(Type.String()),
});

export const BatchResults = Type.Object({ batch: Batch, results: Type.Array(BatchResult) });
