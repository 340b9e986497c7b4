import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountService, Principal, SessionProfile } from '../accounts/service.js';
import { SESSION_TTL_MS } from '../accounts/sessions.js';
import { looksLikeApiKey } from '../accounts/keys.js';
import { forbidden } from '../errors.js';
import { csrfToken } from './csrf.js';
import type { Viewer } from './layout.js';

/** Holds the session key that signing in returned (a key of kind `session`, 12 hours). */
const SESSION_COOKIE = 'mh_session';
/** Before signing in: a random secret that the sign-in and sign-up forms' CSRF tokens are bound to. */
const PRE_SESSION_COOKIE = 'mh_csrf';

/** Who is asking, as every dashboard handler sees it. */
export interface DashboardState {
  viewer: Viewer | null;
  principal: Principal | null;
  /** The CSRF token for the page's forms; empty when the browser holds no secret yet. */
  csrf: string;
  /** What the token is derived from: the session key, else the pre-session cookie's value. */
  csrfSecret: string | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboard: DashboardState;
  }
  interface FastifyContextConfig {
    /** A dashboard route that needs no sign-in (sign-in, sign-up, assets). */
    signedOut?: boolean;
  }
}

/**
 * Whether the browser reached us over https: TLS ending here, or at a proxy that says so in X-Forwarded-Proto.
 * The header is believed without a trusted-proxy list because it can only make the cookie stricter (a browser
 * never sends it itself, so another site cannot use it against a user).
 */
function overHttps(request: FastifyRequest): boolean {
  if (request.protocol === 'https') return true;
  const forwarded = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https';
}

function cookieOptions(request: FastifyRequest, maxAgeSeconds?: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: overHttps(request),
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
  };
}

/** Reads the session cookie (a live session key only) and the CSRF secret that goes with the browser. */
export async function resolveDashboardState(accounts: AccountService, request: FastifyRequest, reply: FastifyReply): Promise<DashboardState> {
  const sessionKey = request.cookies[SESSION_COOKIE];
  if (sessionKey) {
    const profile = looksLikeApiKey(sessionKey) ? await accounts.authenticateSession(sessionKey) : undefined;
    if (profile) return signedInState(profile, sessionKey);
    // Expired, revoked or forged: forget it.
    reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
  }
  const preSession = request.cookies[PRE_SESSION_COOKIE];
  const secret = preSession && /^[A-Za-z0-9_-]{43}$/.test(preSession) ? preSession : undefined;
  return { viewer: null, principal: null, csrf: secret ? csrfToken(secret) : '', csrfSecret: secret };
}

/** Gives a signed-out browser its pre-session secret (for the sign-in and sign-up forms) when it has none. */
export function ensurePreSession(request: FastifyRequest, reply: FastifyReply): void {
  if (request.dashboard.csrfSecret) return;
  const secret = randomBytes(32).toString('base64url');
  reply.setCookie(PRE_SESSION_COOKIE, secret, cookieOptions(request));
  request.dashboard.csrfSecret = secret;
  request.dashboard.csrf = csrfToken(secret);
}

function startSession(request: FastifyRequest, reply: FastifyReply, sessionKey: string): void {
  reply.setCookie(SESSION_COOKIE, sessionKey, cookieOptions(request, Math.floor(SESSION_TTL_MS / 1000)));
}

export function endSession(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
}

/** The principal of a signed-in request (the hook has already sent everyone else to the sign-in page). */
export function principalOf(request: FastifyRequest): Principal {
  const principal = request.dashboard.principal;
  if (!principal) throw new Error('dashboard route reached without a session');
  return principal;
}

/**
 * The principal of a request to the account's own sections (templates, leads, the email sender): the lead API
 * belongs to the account owner, so a client gets a 403 page, as its key gets a 403 from the API.
 */
export function ownerPrincipal(request: FastifyRequest): Principal {
  const principal = principalOf(request);
  if (principal.kind !== 'owner')
    throw forbidden('Templates, leads, webhooks and the email sender belong to the account owner; your access is to publications.');
  return principal;
}

export function viewerOf(request: FastifyRequest): Viewer {
  const viewer = request.dashboard.viewer;
  if (!viewer) throw new Error('dashboard route reached without a session');
  return viewer;
}

/** A local path to go back to after signing in: never another site (`//evil`, `/\\evil`, `https://...`). */
export function localPath(value: string | undefined): string | undefined {
  if (!value || value.length > 2000) return undefined;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return undefined;
  if (/[\u0000-\u001f\u007f]/.test(value)) return undefined;
  return value;
}

/** After signing in or up: the cookie for the browser, and the request's state as if it had come with it. */
export async function adoptSession(accounts: AccountService, request: FastifyRequest, reply: FastifyReply, sessionKey: string): Promise<void> {
  startSession(request, reply, sessionKey);
  const profile = await accounts.authenticateSession(sessionKey);
  if (!profile) throw new Error('a session key just issued does not authenticate');
  request.dashboard = signedInState(profile, sessionKey);
}

function signedInState(profile: SessionProfile, sessionKey: string): DashboardState {
  const viewer: Viewer = {
    userId: profile.principal.userId,
    email: profile.email,
    kind: profile.principal.kind,
    accountName: profile.accountName,
    plan: profile.plan,
  };
  return { viewer, principal: profile.principal, csrf: csrfToken(sessionKey), csrfSecret: sessionKey };
}
