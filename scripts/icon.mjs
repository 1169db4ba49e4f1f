// Renders the marketplace icon, media/handoff.png (128×128), from the activity-bar glyph
// media/handoff.svg: the same hand passing a package, white on a blue rounded square. Headless
// Chromium (the one the VS Code tests use) draws it, so the two never drift apart.
//   node scripts/icon.mjs        (after .ci/setup-vscode.sh has installed Chromium)
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Drawn at 84 px the glyph's 1.6 stroke looks thin: 2 keeps the weight of the small one.
const glyph = readFileSync(join(root, 'media', 'handoff.svg'), 'utf8')
  .replace(/width="24" height="24"/, 'width="84" height="84"')
  .replace(/stroke-width="[\d.]+"/, 'stroke-width="2"');
const html = `<!DOCTYPE html><html><body style="margin:0;background:transparent">
<div id="icon" style="width:128px;height:128px;border-radius:24px;display:flex;align-items:center;justify-content:center;
  background:linear-gradient(160deg,#3b8eea 0%,#1f5fc4 100%);color:#fff">${glyph}</div></body></html>`;

const browser = await chromium.launch({
  executablePath: process.env.HANDOFF_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
});
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 } });
  await page.setContent(html);
  await page.locator('#icon').screenshot({ path: join(root, 'media', 'handoff.png'), omitBackground: true });
} finally {
  await browser.close();
}
console.log('wrote media/handoff.png');
