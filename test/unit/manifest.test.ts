// What package.json promises a first run: every walkthrough step's page exists and ships in the
// .vsix, every command a step or a keybinding names is contributed (a typo would be a dead button
// or a step that never completes), and the keybinding is not VS Code's own.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/hubProcess';

interface Step {
  id: string;
  title: string;
  description: string;
  media: { markdown?: string; image?: string };
  completionEvents?: string[];
}
interface Manifest {
  icon: string;
  engines: Record<string, string>;
  devEngines: { runtime: { name: string; version: string } };
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
  contributes: {
    commands: { command: string }[];
    views: Record<string, { id: string; name: string; when?: string }[]>;
    viewsContainers: { activitybar: { id: string; title: string; icon: string }[] };
    walkthroughs: { id: string; steps: Step[] }[];
    keybindings: { command: string; key: string; mac?: string }[];
  };
}

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
const commands = new Set(manifest.contributes.commands.map((c) => c.command));
const views = new Set(Object.values(manifest.contributes.views).flatMap((v) => v.map((x) => x.id)));
const steps = manifest.contributes.walkthroughs.flatMap((w) => w.steps);
/** What .vscodeignore keeps out of the package, checked the way vsce reads it: last match wins. */
const ignore = readFileSync(join(ROOT, '.vscodeignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
function glob(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*|\*/g, (m) => (m === '**' ? '.*' : '[^/]*'));
  return new RegExp(`^${body}$`);
}
function ships(path: string): boolean {
  let shipped = true;
  for (const line of ignore) {
    const negated = line.startsWith('!');
    if (glob(negated ? line.slice(1) : line).test(path)) shipped = negated;
  }
  return shipped;
}

describe('package.json: the walkthrough, the keybinding, the icons', () => {
  it('has the four steps, each with a page that exists and ships', () => {
    assert.deepEqual(
      steps.map((s) => s.id),
      ['connectAgent', 'sendHandoff', 'seeReceipts', 'openInbox'],
    );
    for (const s of steps) {
      const page = s.media.markdown;
      assert.ok(page, `${s.id} has a markdown page`);
      assert.ok(existsSync(join(ROOT, page)), `${page} exists`);
      assert.ok(ships(page), `${page} is not left out by .vscodeignore`);
      assert.match(
        readFileSync(join(ROOT, page), 'utf8'),
        new RegExp(`^# ${s.title}\\n`),
        `${page} is headed "${s.title}"`,
      );
    }
  });

  it('names only contributed commands and views, in buttons, completion events and keybindings', () => {
    for (const s of steps) {
      const buttons = [...s.description.matchAll(/\(command:([\w.]+)/g)].map((m) => m[1]);
      assert.ok(buttons.length, `${s.id} has a button`);
      // A view's own "Focus on … View" command (VIEW.focus) is VS Code's, not contributed.
      for (const b of buttons)
        assert.ok(
          commands.has(b) || views.has(b.replace(/\.focus$/, '')),
          `${s.id}'s button runs ${b}, which is contributed`,
        );
      assert.ok(s.completionEvents?.length, `${s.id} can complete`);
      for (const e of s.completionEvents ?? []) {
        const [kind, id] = e.split(':');
        if (kind === 'onCommand') assert.ok(commands.has(id), `${s.id} completes on ${id}, which is contributed`);
        else if (kind === 'onView') assert.ok(views.has(id), `${s.id} completes on view ${id}, which is contributed`);
        else assert.fail(`${s.id}: unexpected completion event ${e}`);
      }
    }
    assert.ok(manifest.contributes.keybindings.length);
    for (const k of manifest.contributes.keybindings)
      assert.ok(commands.has(k.command), `the keybinding runs ${k.command}, which is contributed`);
  });

  it('binds Open Inbox to keys VS Code itself does not use', () => {
    const inbox = manifest.contributes.keybindings.find((k) => k.command === 'handoff.openInbox');
    assert.equal(inbox?.key, 'ctrl+alt+h');
    // Cmd+Alt+H is macOS's Hide Others, which VS Code leaves to the native menu.
    assert.equal(inbox?.mac, 'ctrl+cmd+h');
  });

  it("titles the view in words, and leaves showing it to VS Code's own Focus on Handoff View", () => {
    // The editor heads a one-view container "CONTAINER: VIEW" unless the two are the same.
    const container = manifest.contributes.viewsContainers.activitybar.find((c) => c.id === 'handoff');
    const view = manifest.contributes.views.handoff.find((v) => v.id === 'handoff.panel');
    assert.equal(view?.name, container?.title, 'the header reads "Handoff", not "Handoff: Handoffs"');
    assert.ok(!commands.has('handoff.showPanel'), 'no "Show Panel" beside the view\'s own focus command');
  });

  it("has npm check the package's Node only where npm runs (`npx handoff` on Node 20 warns nothing)", () => {
    // npm checks the root package's engines against the Node running npm, while `npm exec` runs
    // the bin on the Node 22 of the `node` devDependency: engines.node >= 22 only printed warnings.
    assert.equal(manifest.engines.node, undefined);
    assert.deepEqual(manifest.devEngines.runtime, { name: 'node', version: '>=20', onFail: 'error' });
    assert.match(manifest.devDependencies.node, /^\^?22\./, 'npm scripts and npm exec run on Node 22');
  });

  it('badges the icon from a view that is never shown, in the Handoff container', () => {
    const unread = manifest.contributes.views.handoff.find((v) => v.id === 'handoff.unread');
    assert.equal(unread?.when, 'false');
  });

  it("ships the icons and the marketplace page's screenshots", () => {
    for (const f of [manifest.icon, ...manifest.contributes.viewsContainers.activitybar.map((a) => a.icon)]) {
      assert.ok(existsSync(join(ROOT, f)), `${f} exists`);
      assert.ok(ships(f), `${f} ships`);
    }
    const svg = readFileSync(join(ROOT, 'media', 'handoff.svg'), 'utf8');
    assert.match(svg, /viewBox="0 0 24 24"/);
    assert.doesNotMatch(svg.replace(/currentColor/g, ''), /#[0-9a-f]{3,8}\b|rgb\(/i, 'one colour: the editor tints it');
    const page = readFileSync(join(ROOT, 'docs', 'marketplace.md'), 'utf8');
    // The page is the package's README: its links are from the package's root.
    const images = [...page.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]);
    assert.ok(images.length > 0, 'the marketplace page shows screenshots');
    for (const f of images) {
      assert.ok(existsSync(join(ROOT, f)), `${f} exists`);
      assert.ok(ships(f), `${f} ships`);
    }
  });
});
