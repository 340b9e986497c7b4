// The user message sent to the LLM: the user's template rendered with the lead's variables, or, without a
// template, a prompt written from the research facts (which, unlike templates, can also carry the sender's offer).

import { renderTemplate } from '../templates/engine.js';
import { templateValues } from './builtin.js';
import type { LeadFacts } from './builtin.js';
import { singleLine } from '../../content/text.js';
import { tidyBody, tidySubject } from './email-text.js';

/** Bound on the prompt sent for one lead (a 20 KB template plus the facts fits comfortably). */
export const MAX_PROMPT_CHARS = 40_000;

export function buildLlmPrompt(facts: LeadFacts, template?: { subject: string; body: string }): string {
  const values = templateValues(facts);
  if (template) {
    const prompt = tidyBody(renderTemplate(template.body, values));
    const subject = tidySubject(renderTemplate(template.subject, values));
    const full = subject ? `${prompt}\n\nSubject line (use it as written, or adapt it): ${subject}` : prompt;
    return full.slice(0, MAX_PROMPT_CHARS);
  }

  const lines: string[] = [
    'Write a short cold outreach email (under 150 words) to the person below, from the sender below.',
    '',
    `Recipient: ${values.fullName || 'unknown name'} <${values.email}>, at ${values.companyName} (${values.domain}).`,
  ];
  // Website text is quoted between """; it must not be able to close the quote.
  const quote = (text: string) => `"""${text.replace(/"{2,}/g, '"')}"""`;
  if (values.companyDescription || values.productDescription) {
    if (values.companyDescription) lines.push(`What the company says about itself on its website: ${quote(values.companyDescription)}`);
    if (values.productDescription) lines.push(`Its products or services, from its website: ${quote(values.productDescription)}`);
    if (values.industry) lines.push(`Industry keywords: ${values.industry}`);
  } else {
    lines.push('Only the company domain is known: do not guess or describe what the company does.');
  }
  const offer = singleLine(facts.sender.offer);
  lines.push(
    '',
    `Sender: ${[values.senderName, values.senderCompany].filter(Boolean).join(', ') || 'unknown'}.`,
    offer ? `What the sender offers: ${offer}` : 'The sender has not described the offer: keep it general, do not invent one.',
    '',
    'Greet the recipient by first name. Mention what their company does in one sentence, using only the facts ' +
      'above. Explain in one or two sentences how the offer could help them. End with one clear call to action ' +
      '(a short call next week). Sign with the sender name and company. Subject under 80 characters.',
  );
  return lines.join('\n').slice(0, MAX_PROMPT_CHARS);
}
