// Whether a socket control connection is an editor window of this hub: it presents the key the
// window that started the hub gave it (protocol/editorKey.ts). A hub started outside any window
// has no key, so every socket control connection to it is `cli`.
import { createHash, timingSafeEqual } from 'node:crypto';
import { EDITOR_KEY_ENV, EDITOR_KEY_PATTERN } from '../../protocol/editorKey';

/** True only for the hub's own key. */
export type EditorKeyCheck = (presented: string | undefined) => boolean;

const noKey: EditorKeyCheck = () => false;

/** Equal-length digests, so neither the comparison's time nor a length check says how close a guess was. */
function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/**
 * Takes the key out of `env` (what the hub starts — tmux, a Matrix worker — must not inherit it).
 * Only a hub launched by an editor (`editor`) takes one: a headless hub has none to honour.
 */
export function takeEditorKey(env: NodeJS.ProcessEnv, editor: boolean): { check: EditorKeyCheck; why?: string } {
  const key = env[EDITOR_KEY_ENV];
  delete env[EDITOR_KEY_ENV];
  if (!editor) return { check: noKey };
  if (!key) return { check: noKey, why: `no ${EDITOR_KEY_ENV} from the editor` };
  if (!EDITOR_KEY_PATTERN.test(key)) return { check: noKey, why: `${EDITOR_KEY_ENV} is not 64 hex digits` };
  const want = digest(key);
  return { check: (presented) => presented !== undefined && timingSafeEqual(digest(presented), want) };
}
