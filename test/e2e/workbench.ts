// What the view suites watch in the real VS Code page: script that must never run there (a CSP
// refusal in the console, or a dialog: a body's <img onerror> that ran), and the theme they asked
// for, applied before anything is measured or pictured.
import type { Page } from 'playwright-core';
import { waitUntil } from '../helpers/wait';

/** From now on, each CSP refusal and each dialog (dismissed) is added to these lists. */
export function watchForScript(page: Page, cspViolations: string[], dialogs: string[]): void {
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/.test(m.text())) cspViolations.push(m.text());
  });
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
}

/** Until the workbench wears `theme` (its class, e.g. `vs-dark`). */
export async function themeApplied(page: Page, theme: { theme: string; workbenchClass: RegExp }): Promise<void> {
  await waitUntil(
    async () =>
      theme.workbenchClass.test((await page.locator('.monaco-workbench').first().getAttribute('class')) ?? ''),
    15_000,
    `the ${theme.theme} theme to be applied`,
  );
}

/** Switches the theme with the theme picker (Ctrl+K Ctrl+T), as a person would; `label` is how the picker lists it. */
export async function pickTheme(
  page: Page,
  t: { theme: string; label: string; workbenchClass: RegExp },
): Promise<void> {
  await page
    .locator('.monaco-workbench')
    .click({ position: { x: 5, y: 5 } })
    .catch(() => {});
  await page.keyboard.press('Control+K');
  await page.keyboard.press('Control+T');
  await page.locator('.quick-input-widget .monaco-list-row').first().waitFor();
  await page.keyboard.type(t.label);
  await page
    .locator('.quick-input-widget .monaco-list-row.focused')
    .filter({ hasText: t.label })
    .first()
    .waitFor({ timeout: 10_000 });
  await page.keyboard.press('Enter');
  await themeApplied(page, t);
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

/** What a failed VS Code run says: its error, then the harness's and Handoff's last 40 log lines. */
export function runFailure(res: { error?: Error; logs: string }): string {
  const tail = res.logs
    .split('\n')
    .filter((l) => /harness|pageerror|Handoff|handoff/.test(l))
    .slice(-40)
    .join('\n');
  return `${res.error?.stack ?? res.error}\n${tail}`;
}
