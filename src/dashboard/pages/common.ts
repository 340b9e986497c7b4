// pages/leads.ts still imports these from here; once it imports them from their own modules this file goes.
export { queryText } from '../forms.js';
export { noticeOf } from '../notices.js';
export { render } from '../render.js';
export { ownerPrincipal } from '../session.js';
