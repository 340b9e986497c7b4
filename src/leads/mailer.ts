import nodemailer from 'nodemailer';

export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: OutgoingEmail): Promise<void>;
  close(): void;
}

/** A delivery that failed: the job ends `failed` with this message; nothing else breaks. */
export class MailError extends Error {
  override readonly name = 'MailError';
}

/** Delivers over SMTP (`SMTP_URL`, e.g. `smtp://user:pass@mail.example.com:587`) from `from`. */
export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(message) {
      try {
        await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text });
      } catch (error) {
        throw new MailError(error instanceof Error ? error.message : String(error));
      }
    },
    close: () => transport.close(),
  };
}
