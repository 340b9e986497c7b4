import type { PublicationAccess } from '../portal/publications/service.js';
import type { AccessLevel } from '../portal/permissions.js';
import { html, type SafeHtml } from './html.js';

export type PublicationTab = 'articles' | 'feeds' | 'clients';

/** Owners, and admins of the publication, manage its clients (the clients service decides the details). */
export function managesClients(level: AccessLevel): boolean {
  return level === 'owner' || level === 'admin';
}

/** The head of every page of one publication: where it is, the caller's access, and the publication's tabs. */
export function publicationHeader(
  publication: PublicationAccess['publication'],
  level: AccessLevel,
  current: PublicationTab,
  subtitle?: string,
): SafeHtml {
  const base = `/publications/${encodeURIComponent(publication.app_id)}`;
  const tabs = [
    { key: 'articles', label: 'Articles', href: `${base}/articles` },
    { key: 'feeds', label: 'RSS feeds', href: `${base}/feeds` },
    ...(managesClients(level) ? [{ key: 'clients', label: 'Clients', href: `${base}/clients` }] : []),
  ];
  return html`<p class="crumbs"><a href="/publications">Publications</a> › ${publication.name}${subtitle ? html` › ${subtitle}` : ''}</p>
<h1>${publication.name}</h1>
<p class="muted">App ID <code>${publication.app_id}</code> · your access: <strong>${level}</strong></p>
<nav aria-label="Publication"><ul class="tabs">${tabs.map(
    (tab) => html`<li><a href="${tab.href}"${tab.key === current ? html` aria-current="page"` : ''}>${tab.label}</a></li>`,
  )}</ul></nav>`;
}
