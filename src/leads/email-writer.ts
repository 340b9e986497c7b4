import { generateBuiltinEmail, type GeneratedEmail, type LeadFacts, templateValues } from './generation/builtin.js';
import type { LlmClient } from './generation/llm.js';
import { buildLlmPrompt } from './generation/prompt.js';
import { tidySubject } from './generation/email-text.js';
import { renderTemplate } from './templates/engine.js';

export interface TemplateText {
  subject: string;
  body: string;
}

export interface WrittenEmail extends GeneratedEmail {
  generator: 'builtin' | 'llm';
}

/**
 * Writes the email of a lead: with an LLM when one is configured (the rendered template, or a prompt built from
 * the research, is its prompt; a template's subject line, when it has one, is the subject), else with the built-in
 * generator.
 */
export class EmailWriter {
  constructor(private readonly llm: LlmClient | undefined) {}

  async write(facts: LeadFacts, template: TemplateText | undefined): Promise<WrittenEmail> {
    if (!this.llm) return { ...generateBuiltinEmail(facts, template), generator: 'builtin' };
    const written = await this.llm.generate(buildLlmPrompt(facts, template));
    const subject = template?.subject ? tidySubject(renderTemplate(template.subject, templateValues(facts))) : '';
    return { subject: subject || written.subject, body: written.body, generator: 'llm' };
  }
}
