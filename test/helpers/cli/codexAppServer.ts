// Codex's own account of its hooks: `codex app-server` (JSON lines on stdio) answers `hooks/list`
// with each hook's key, current hash and trust status. A test uses it as the oracle for "is the
// hook `handoff connect codex` wrote trusted?", since an untrusted hook is skipped silently.
import { spawn } from 'node:child_process';
import { CLI_BIN, type AgentHome } from './agents';

export interface CodexHook {
  key: string;
  eventName: string;
  command?: string;
  matcher: string | null;
  timeoutSec: number;
  currentHash: string;
  trustStatus: 'managed' | 'untrusted' | 'trusted' | 'modified';
  enabled: boolean;
  sourcePath: string;
}

export interface CodexHooksList {
  hooks: CodexHook[];
  warnings: string[];
  errors: Array<{ path: string; message: string }>;
}

/** Sends `requests` after the initialize handshake and returns their results in order. */
export async function codexAppServer(
  h: AgentHome,
  requests: Array<{ method: string; params?: unknown }>,
  timeoutMs = 20_000,
): Promise<any[]> {
  const child = spawn(CLI_BIN.codex, ['app-server'], { env: h.env, stdio: ['pipe', 'pipe', 'pipe'] });
  const waiting = new Map<number, (m: any) => void>();
  let buf = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const m = JSON.parse(line);
      if (m.id !== undefined && waiting.has(m.id)) waiting.get(m.id)!(m);
    }
  });
  let next = 0;
  const request = (method: string, params: unknown) =>
    new Promise<any>((resolve, reject) => {
      const id = next++;
      waiting.set(id, (m) =>
        m.error ? reject(new Error(`${method}: ${JSON.stringify(m.error)}`)) : resolve(m.result),
      );
      child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const died = new Promise<never>((_, reject) =>
    child.on('exit', (code) => reject(new Error(`codex app-server exited (${code}) before answering:\n${stderr}`))),
  );
  try {
    await Promise.race([
      request('initialize', { clientInfo: { name: 'handoff-tests', title: null, version: '0' }, capabilities: null }),
      died,
    ]);
    child.stdin.write(`${JSON.stringify({ method: 'initialized' })}\n`);
    const results = [];
    for (const r of requests) results.push(await Promise.race([request(r.method, r.params ?? {}), died]));
    return results;
  } finally {
    clearTimeout(timer);
    child.kill();
  }
}

/** The hooks Codex sees for `cwd`, with their trust status. */
export async function codexHooks(h: AgentHome, cwd: string): Promise<CodexHooksList> {
  const [result] = await codexAppServer(h, [{ method: 'hooks/list', params: { cwds: [cwd] } }]);
  const entry = result.data[0] ?? { hooks: [], warnings: [], errors: [] };
  return { hooks: entry.hooks, warnings: entry.warnings, errors: entry.errors };
}
