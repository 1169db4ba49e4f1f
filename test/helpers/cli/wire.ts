// The model's answers in each wire format, streamed the way each CLI reads them: Anthropic
// Messages SSE (Claude Code), OpenAI Responses SSE (Codex), Gemini streamGenerateContent SSE.
import type { ServerResponse } from 'node:http';
import type { Wire } from './conversation';

/** One model move: text (ends the turn) or one tool call by the name the CLI offered. */
export type Move =
  { type: 'text'; text: string } | { type: 'call'; name: string; args: Record<string, unknown>; namespace?: string };

let seq = 0;
const nextId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(++seq).toString(36)}`;

function sse(res: ServerResponse, events: Array<[string | null, unknown]>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'close' });
  for (const [event, data] of events) res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
  res.end();
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify(body));
}

function anthropic(res: ServerResponse, move: Move, model: string, stream: boolean): void {
  const id = nextId('msg');
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const block =
    move.type === 'text'
      ? { type: 'text', text: move.text }
      : { type: 'tool_use', id: nextId('toolu'), name: move.name, input: move.args };
  const stop = move.type === 'text' ? 'end_turn' : 'tool_use';
  if (!stream)
    return json(res, {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [block],
      stop_reason: stop,
      stop_sequence: null,
      usage,
    });
  const start = move.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
  const delta =
    move.type === 'text'
      ? { type: 'text_delta', text: move.text }
      : { type: 'input_json_delta', partial_json: JSON.stringify(move.args) };
  sse(res, [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      },
    ],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: start }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'message_delta',
      { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } },
    ],
    ['message_stop', { type: 'message_stop' }],
  ]);
}

function openai(res: ServerResponse, move: Move, model: string): void {
  const id = nextId('resp');
  const item =
    move.type === 'text'
      ? {
          type: 'message',
          id: nextId('msg'),
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: move.text, annotations: [] }],
        }
      : {
          type: 'function_call',
          id: nextId('fc'),
          call_id: nextId('call'),
          name: move.name,
          ...(move.namespace ? { namespace: move.namespace } : {}),
          arguments: JSON.stringify(move.args),
          status: 'completed',
        };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  sse(res, [
    ['response.created', { type: 'response.created', response: { id, model, status: 'in_progress' } }],
    ['response.output_item.added', { type: 'response.output_item.added', output_index: 0, item }],
    ...(move.type === 'text'
      ? [
          [
            'response.output_text.delta',
            {
              type: 'response.output_text.delta',
              item_id: item.id,
              output_index: 0,
              content_index: 0,
              delta: move.text,
            },
          ] as [string, unknown],
        ]
      : []),
    ['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }],
    [
      'response.completed',
      { type: 'response.completed', response: { id, model, status: 'completed', output: [item], usage } },
    ],
  ]);
}

function gemini(res: ServerResponse, move: Move, model: string, stream: boolean): void {
  const part = move.type === 'text' ? { text: move.text } : { functionCall: { name: move.name, args: move.args } };
  const chunk = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: model,
    responseId: nextId('gem'),
  };
  if (!stream) return json(res, chunk);
  sse(res, [[null, chunk]]);
}

export function answer(wire: Wire, res: ServerResponse, move: Move, model: string, stream: boolean): void {
  if (wire === 'anthropic') anthropic(res, move, model, stream);
  else if (wire === 'openai') openai(res, move, model);
  else gemini(res, move, model, stream);
}
