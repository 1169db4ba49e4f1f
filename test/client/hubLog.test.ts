// The hub's stderr lines as the editor's log reads them: each at the level the hub wrote it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatHubLine, parseHubLine } from '../../extension/protocol/hubLog';

test('a hub line is read back at the level it was written, and anything else is not info', () => {
  const at = new Date('2026-12-02T10:00:00Z');
  for (const level of ['info', 'warn', 'error'] as const) {
    const line = formatHubLine(`store ${level} [x] here`, level, at).trimEnd();
    assert.deepEqual(parseHubLine(line), { level, text: `store ${level} [x] here` });
  }
  assert.deepEqual(parseHubLine('[handoff hub 2026-12-02T10:00:00.000Z] an older hub'), {
    level: 'info',
    text: 'an older hub',
  });
  assert.equal(parseHubLine('TypeError: x is not a function').level, 'error');
  assert.equal(parseHubLine('    at run (/dist/hub.js:1:2)').level, 'error');
  assert.equal(parseHubLine('(node:123) [DEP0040] DeprecationWarning: punycode').level, 'warn');
});
