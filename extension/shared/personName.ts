// The name the person goes by when nothing names them: their OS user name, made an identity. The
// editor (client/settings.ts, unless `handoff.identity` is set) and `handoff send` without --as
// both use it, so the person is one name on the bus whichever they send from.
import { userInfo } from 'node:os';

export function osPersonName(): string {
  let user = 'human';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): keep the fallback.
  }
  const safe = user.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return safe || 'human';
}
