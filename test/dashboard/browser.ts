import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { PASSWORD, uniqueEmail } from './helpers.js';

/** Debian's Chromium (`apt-get install chromium`); never a browser downloaded by Playwright. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const available = existsSync(CHROMIUM_PATH);
// In CI a missing browser fails the run (.ci/run installs it), as a missing PostgreSQL does; elsewhere it skips.
if (process.env.CI === 'true' && !available) {
  throw new Error(`CI must run the browser tests: install Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);
}

/** For describe(..., { skip }): a reason when the browser is missing, false when the tests can run. */
export const skipWithoutChromium: string | false = available ? false : `Chromium is not installed at ${CHROMIUM_PATH}`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Chromium opened on a server's base URL: each page in a fresh profile (no cookies), all closed together. */
export async function openBrowser(base: string) {
  const browser = await launchChromium();
  const contexts: BrowserContext[] = [];
  return {
    base,
    /** A page in a profile of its own, at a desktop width unless told otherwise. */
    async newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
      const context = await browser.newContext({ viewport, baseURL: base });
      context.setDefaultTimeout(15_000);
      contexts.push(context);
      return context.newPage();
    },
    async close(): Promise<void> {
      for (const context of contexts) await context.close();
      await browser.close();
    },
  };
}

export type BrowserSession = Awaited<ReturnType<typeof openBrowser>>;

const SCREENSHOT_DIR = join(import.meta.dirname, '..', '..', 'docs', 'screenshots');

/** Saves a screenshot of the page into docs/screenshots/NAME.png, only when SCREENSHOTS=1 (so CI does not churn files). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** A page of another site (another port is another origin, though the same site for cookies) that serves `html`. */
export async function otherSite(html: () => string): Promise<{ base: string; close(): Promise<void> }> {
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Signs up through the sign-up page (the new session stays in the page's context); returns the first key shown. */
export async function signUpIn(
  page: Page,
  email = uniqueEmail('browser'),
  organisation = 'Acme Media',
): Promise<{ email: string; firstKey: string }> {
  await page.goto('/sign-up');
  await page.getByLabel('Organisation').fill(organisation);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Repeat the password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create the account' }).click();
  await page.getByText('Your account is ready').waitFor();
  return { email, firstKey: (await page.locator('#new-key').textContent())!.trim() };
}
