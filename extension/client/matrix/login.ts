// Password login against the homeserver's client-server API (m.login.password), with fetch: the
// extension host never loads matrix-js-sdk. Errors name the homeserver's answer, never the password.

export interface MatrixLogin {
  userId: string;
  accessToken: string;
  deviceId?: string;
}

export class MatrixLoginError extends Error {}

/** `alice`, `@alice:example.org` — both are accepted by m.login.password's user identifier. */
export async function passwordLogin(
  homeserver: string,
  user: string,
  password: string,
  timeoutMs = 20_000,
): Promise<MatrixLogin> {
  const url = `${homeserver}/_matrix/client/v3/login`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'm.login.password',
        identifier: { type: 'm.id.user', user: user.trim() },
        password,
        initial_device_display_name: 'Handoff (VS Code)',
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new MatrixLoginError(`cannot reach ${homeserver}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
  }
  let body: { user_id?: unknown; access_token?: unknown; device_id?: unknown; errcode?: unknown; error?: unknown };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw new MatrixLoginError(`${homeserver} answered HTTP ${res.status} without JSON: is it a Matrix homeserver?`);
  }
  if (!res.ok) {
    const code = typeof body.errcode === 'string' ? body.errcode : `HTTP ${res.status}`;
    const text = typeof body.error === 'string' ? `: ${body.error}` : '';
    throw new MatrixLoginError(`${homeserver} refused the login (${code}${text})`);
  }
  if (typeof body.user_id !== 'string' || typeof body.access_token !== 'string') {
    throw new MatrixLoginError(`${homeserver} answered the login without a user id and access token`);
  }
  return {
    userId: body.user_id,
    accessToken: body.access_token,
    deviceId: typeof body.device_id === 'string' ? body.device_id : undefined,
  };
}
