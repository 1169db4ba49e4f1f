// What the model "sees": each wire format's request body flattened into one list of items, so a
// test can search the context the same way for Claude Code, Codex and Gemini CLI.

export type Wire = 'anthropic' | 'openai' | 'gemini';

export interface Item {
  /** system: instructions/system prompt; user/assistant/developer: messages; tool: tool results. */
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  kind: 'text' | 'tool_call' | 'tool_result' | 'other';
  text: string;
  /** Tool name for tool_call, tool call id for tool_result (when the wire names it). */
  name?: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

function anthropicContent(role: Item['role'], content: unknown, out: Item[]): void {
  if (typeof content === 'string') return void out.push({ role, kind: 'text', text: content });
  for (const b of (content as any[]) ?? []) {
    if (b.type === 'text') out.push({ role, kind: 'text', text: b.text });
    else if (b.type === 'tool_use')
      out.push({ role, kind: 'tool_call', name: b.name, text: `${b.name} ${str(b.input)}` });
    else if (b.type === 'tool_result') {
      const text =
        typeof b.content === 'string'
          ? b.content
          : (b.content ?? []).map((c: any) => (c.type === 'text' ? c.text : str(c))).join('\n');
      out.push({ role: 'tool', kind: 'tool_result', name: b.tool_use_id, text });
    } else out.push({ role, kind: 'other', text: str(b) });
  }
}

function anthropic(body: any): Item[] {
  const out: Item[] = [];
  if (body.system) anthropicContent('system', body.system, out);
  for (const m of body.messages ?? []) anthropicContent(m.role, m.content, out);
  return out;
}

function openai(body: any): Item[] {
  const out: Item[] = [];
  if (body.instructions) out.push({ role: 'system', kind: 'text', text: body.instructions });
  const input =
    typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : (body.input ?? []);
  for (const it of input) {
    if (it.type === 'message' || (!it.type && it.role)) {
      const parts = typeof it.content === 'string' ? [{ text: it.content }] : (it.content ?? []);
      for (const p of parts) out.push({ role: it.role, kind: 'text', text: p.text ?? str(p) });
    } else if (it.type === 'function_call') {
      const name = it.namespace ? `${it.namespace}.${it.name}` : it.name;
      out.push({ role: 'assistant', kind: 'tool_call', name, text: `${name} ${it.arguments}` });
    } else if (it.type === 'function_call_output' || it.type === 'custom_tool_call_output') {
      const o = it.output;
      const text =
        typeof o === 'string' ? o : Array.isArray(o) ? o.map((c: any) => c.text ?? str(c)).join('\n') : str(o);
      out.push({ role: 'tool', kind: 'tool_result', name: it.call_id, text });
    } else out.push({ role: 'assistant', kind: 'other', text: str(it) });
  }
  return out;
}

function geminiParts(role: Item['role'], parts: any[], out: Item[]): void {
  for (const p of parts ?? []) {
    if (p.text !== undefined) out.push({ role, kind: 'text', text: p.text });
    else if (p.functionCall)
      out.push({
        role,
        kind: 'tool_call',
        name: p.functionCall.name,
        text: `${p.functionCall.name} ${str(p.functionCall.args)}`,
      });
    else if (p.functionResponse)
      out.push({
        role: 'tool',
        kind: 'tool_result',
        name: p.functionResponse.name,
        text: str(p.functionResponse.response),
      });
    else out.push({ role, kind: 'other', text: str(p) });
  }
}

function gemini(body: any): Item[] {
  const out: Item[] = [];
  if (body.systemInstruction) geminiParts('system', body.systemInstruction.parts, out);
  for (const c of body.contents ?? []) geminiParts(c.role === 'model' ? 'assistant' : 'user', c.parts, out);
  return out;
}

export function conversation(wire: Wire, body: any): Item[] {
  return wire === 'anthropic' ? anthropic(body) : wire === 'openai' ? openai(body) : gemini(body);
}

/** Names of the tools a request offers (Codex namespaces flattened to `namespace.tool`). */
export function offeredTools(wire: Wire, body: any): string[] {
  if (wire === 'anthropic') return (body.tools ?? []).map((t: any) => t.name);
  if (wire === 'gemini')
    return (body.tools ?? []).flatMap((t: any) => (t.functionDeclarations ?? []).map((f: any) => f.name));
  // Built-ins without a name (e.g. {type: 'web_search'}) go by their type.
  return (body.tools ?? []).flatMap((t: any) =>
    t.type === 'namespace' ? (t.tools ?? []).map((s: any) => `${t.name}.${s.name}`) : [t.name ?? t.type],
  );
}

/** Occurrences of `needle` in `hay`, non-overlapping. */
export function occurrences(hay: string, needle: string): number {
  let n = 0;
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length)) n++;
  return n;
}
