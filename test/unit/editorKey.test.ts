// The hub's side of the editor key: only a hub an editor launched takes one, it takes it out of
// its environment (what it starts does not inherit it), and only that exact key matches.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { takeEditorKey } from '../../extension/hub/serve/editorKey';
import { EDITOR_KEY_ENV } from '../../extension/protocol/editorKey';

const KEY = randomBytes(32).toString('hex');

describe("the hub's editor key", () => {
  it('matches only itself, and leaves the environment', () => {
    const env: NodeJS.ProcessEnv = { [EDITOR_KEY_ENV]: KEY };
    const { check, why } = takeEditorKey(env, true);
    assert.equal(why, undefined);
    assert.equal(env[EDITOR_KEY_ENV], undefined, 'children must not inherit it');
    assert.equal(check(KEY), true);
    assert.equal(check(randomBytes(32).toString('hex')), false);
    assert.equal(check(KEY.slice(1)), false, 'a shorter guess is a no, not a throw');
    assert.equal(check(''), false);
    assert.equal(check(undefined), false);
  });

  it('a headless hub has none, and a malformed one is none, said why', () => {
    const headless: NodeJS.ProcessEnv = { [EDITOR_KEY_ENV]: KEY };
    assert.equal(takeEditorKey(headless, false).check(KEY), false);
    assert.equal(headless[EDITOR_KEY_ENV], undefined);
    const odd = takeEditorKey({ [EDITOR_KEY_ENV]: 'short' }, true);
    assert.equal(odd.check('short'), false);
    assert.match(odd.why ?? '', /not 64 hex digits/);
    assert.match(takeEditorKey({}, true).why ?? '', /no HANDOFF_EDITOR_KEY/);
  });
});
