// The hello line's schemas, checked by the hub before it reads any field. Apart from hello.ts so
// the hook and the bridge, which only write hellos, do not load zod on an agent's hot path.
import { z } from 'zod';
import type { AgentHello, ControlHello, Hello } from './hello';
import { HOOK_CLIS, HOOK_PHASES, type HookHello, type ProcessProof } from './hook';
import { IDENTITY_PATTERN } from './names';
import { REPO_NAME_PATTERN, type LinkHello } from './link';

const version = z.literal(1);
const pid = z
  .number()
  .int()
  .positive()
  .max(2 ** 31);
/** What a peer says it is, for logs and the panel; the hub shortens and sanitises it again. */
const client = z.string().max(256).optional();
/** A client's proof of its hub's secret (shared/hubSecret.ts), where the hub keeps one. */
const nonce = z.string().max(64).optional();
const proof = z.string().max(128).optional();

/** The tmux pane a hook or bridge says its agent runs in: the hub may type a wake into it. */
const tmuxTerminal = z
  .object({
    kind: z.literal('tmux'),
    socket: z
      .string()
      .min(1)
      .max(1024)
      .refine((s) => s.startsWith('/') && !/[\n\r]/.test(s) && !s.includes(String.fromCharCode(0)), {
        message: 'must be an absolute path on one line',
      }),
    pane: z.string().regex(/^%\d{1,9}$/, 'must be a tmux pane id (%N)'),
  })
  .strict();

// The agent's name and roles are checked by the hub after this, so a bad name gets the fix in
// every tool's answer instead of a closed connection.
const agentHello: z.ZodType<AgentHello> = z.object({
  handoff: version,
  kind: z.literal('mcp'),
  identity: z.string().max(256).optional(),
  session: z.string().max(256).optional(),
  roles: z.array(z.string().max(256)).max(64).optional(),
  pid: pid.optional(),
  agentPid: pid.optional(),
  client,
  resume: z.boolean().optional(),
  terminal: tmuxTerminal.optional(),
  checkout: z
    .object({ folder: z.string().max(4096), branch: z.string().max(1024).optional(), linked: z.boolean() })
    .strict()
    .optional(),
  proves: z.boolean().optional(),
  nonce,
  proof,
});

const controlHello: z.ZodType<ControlHello> = z.object({
  handoff: version,
  kind: z.literal('control'),
  client,
  // Bounded, not pattern-checked: a wrong key is a `cli` connection, not a refused one.
  editorKey: z.string().max(128).optional(),
  nonce,
  proof,
});

export const hookHello: z.ZodType<HookHello> = z.object({
  handoff: version,
  kind: z.literal('hook'),
  cli: z.enum(HOOK_CLIS),
  phase: z.enum(HOOK_PHASES),
  event: z.string().max(64),
  identity: z.string().regex(IDENTITY_PATTERN),
  session: z.string().min(1).max(200),
  ancestors: z.array(pid).max(16),
  waitMs: z.number().int().min(0).max(3_600_000).optional(),
  terminal: tmuxTerminal.optional(),
  nonce,
  proof,
});

/** The hook's answer to the hub's challenge (hook.ts): its pid, nothing else. */
export const processProof: z.ZodType<ProcessProof> = z.object({ pid }).strict();

/** Another repository's hub: checked against this hub's agreements after this (hub/link/agreements.ts). */
const linkHello: z.ZodType<LinkHello> = z.object({
  handoff: version,
  kind: z.literal('link'),
  link: z
    .object({
      repo: z.string().regex(REPO_NAME_PATTERN, 'not a repository name'),
      root: z.string().min(1).max(4096),
      key: z.string().min(1).max(256),
      nonce: z.string().min(16).max(64),
    })
    .strict(),
  nonce,
  proof,
});

const kinds: Record<string, z.ZodType<Hello>> = {
  mcp: agentHello,
  control: controlHello,
  hook: hookHello,
  link: linkHello,
};

/** The hello, or why it is refused (naming the field). */
export function readHello(value: unknown): Hello | string {
  if (typeof value !== 'object' || value === null) return 'a hello is a JSON object';
  const v = value as { handoff?: unknown; kind?: unknown };
  if (v.handoff !== 1) return `hello version ${String(v.handoff).slice(0, 20)}, this hub speaks 1`;
  const schema = typeof v.kind === 'string' ? kinds[v.kind] : undefined;
  if (!schema) return 'hello kind must be mcp, control, hook or link';
  const r = schema.safeParse(value);
  return r.success ? r.data : r.error.issues.map((i) => `${i.path.join('.') || 'hello'} ${i.message}`).join('; ');
}
