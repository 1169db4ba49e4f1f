// A model endpoint on 127.0.0.1 in Ollama's shape, for VS Code's own agent (Copilot Chat reads a
// "bring your own key" Ollama endpoint from github.copilot.chat.byok.ollamaEndpoint, signed in or
// not): the version, tags and show calls it makes to list a model with tools, and OpenAI-style
// streamed chat completions. A test scripts each move; every completion request is kept, with the
// whole conversation as text, so a test can tell what entered the model's context.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const OLLAMA_MODEL = 'scripted:latest';

export interface ChatRequest {
  index: number;
  /** Every message's content and tool calls, as one string. */
  text: string;
  tools: string[];
  /** The role of the newest message. */
  last: string;
}

/** Call a tool the agent offers (by exact name), or answer text (ends the turn). */
export type ChatMove = { call: string; args: Record<string, unknown> } | { text: string };

export interface OllamaModel {
  url: string;
  requests: ChatRequest[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function stream(res: ServerResponse, move: ChatMove): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: unknown, finish: string | null) =>
    res.write(
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: OLLAMA_MODEL, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
    );
  if ('call' in move) {
    const call = {
      index: 0,
      id: `call_${Date.now()}`,
      type: 'function',
      function: { name: move.call, arguments: JSON.stringify(move.args) },
    };
    chunk({ role: 'assistant', tool_calls: [call] }, null);
    chunk({}, 'tool_calls');
  } else {
    chunk({ role: 'assistant', content: move.text }, null);
    chunk({}, 'stop');
  }
  res.end('data: [DONE]\n\n');
}

export async function startOllamaModel(script: (r: ChatRequest) => ChatMove): Promise<OllamaModel> {
  const requests: ChatRequest[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const path = req.url ?? '';
      if (path.startsWith('/api/version')) return json(res, { version: '0.9.0' });
      if (path.startsWith('/api/tags'))
        return json(res, {
          models: [
            {
              name: OLLAMA_MODEL,
              model: OLLAMA_MODEL,
              modified_at: new Date(0).toISOString(),
              size: 1,
              digest: 'scripted',
              details: {},
            },
          ],
        });
      if (path.startsWith('/api/show'))
        return json(res, {
          capabilities: ['completion', 'tools'],
          model_info: {
            'general.architecture': 'llama',
            'general.basename': 'scripted',
            'llama.context_length': 32768,
          },
        });
      if (path.startsWith('/v1/chat/completions')) {
        let body: {
          messages?: { role: string; content?: unknown; tool_calls?: unknown }[];
          tools?: { function?: { name?: string } }[];
          stream?: boolean;
        } = {};
        try {
          body = JSON.parse(raw);
        } catch {
          // answered as an empty conversation
        }
        const messages = body.messages ?? [];
        const r: ChatRequest = {
          index: requests.length,
          text: messages
            .map(
              (m) =>
                `${typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')} ${m.tool_calls ? JSON.stringify(m.tool_calls) : ''}`,
            )
            .join('\n'),
          tools: (body.tools ?? []).flatMap((t) => (t.function?.name ? [t.function.name] : [])),
          last: messages.at(-1)?.role ?? '',
        };
        requests.push(r);
        const move = script(r);
        if (body.stream) return stream(res, move);
        return json(res, {
          id: 'c',
          object: 'chat.completion',
          created: 1,
          model: OLLAMA_MODEL,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: 'text' in move ? move.text : '' },
              finish_reason: 'stop',
            },
          ],
        });
      }
      res.writeHead(404);
      res.end('not found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
