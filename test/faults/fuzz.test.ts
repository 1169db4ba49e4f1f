// Property-based fuzzing (fast-check) of every boundary of a real hub process: the hello line (all
// kinds, hooks included), every MCP tool's arguments, every control request, and the Matrix wire
// decoder. Properties: the hub never dies, every rejection is a clear error, and after the run
// (and a kill -9) the store reopens with every acknowledged handoff.
import assert from 'node:assert/strict';
import { createConnection } from 'node:net';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { verifyWire } from '../../extension/hub/matrix/keys';
import {
  readAnnouncement,
  readBatch,
  readEvent,
  readMessage,
  readReaction,
  readReceipt,
  readReply,
} from '../../extension/hub/matrix/wire';
import { connectControl, type ControlClient } from '../../extension/shared/controlClient';
import { connectAgent, type Agent } from '../helpers/agent';
import { startHub, type HubProcess } from '../helpers/hubProcess';

const TOOLS = [
  'whoami',
  'list_peers',
  'send_handoff',
  'inbox',
  'get_message',
  'mark_read',
  'ack',
  'report_result',
  'pending',
  'get_receipts',
  'get_unread_summary',
  'search_history',
];
const CONTROL = [
  'handoff/snapshot',
  'handoff/send',
  'handoff/inbox',
  'handoff/message',
  'handoff/receipt',
  'handoff/chase',
  'handoff/resolve',
  'handoff/search',
  'handoff/retention',
  'handoff/export',
  'handoff/matrix/disconnect',
];
const RUNS = Number(process.env.HANDOFF_FUZZ_RUNS) || 100;
/** A real Ed25519 public key (SPKI DER, base64) nothing in the fuzz was signed with. */
const FUZZ_KEY = 'MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=';

/** Values an attacker would try: random JSON, plus near-valid shapes with hostile fields. */
const hostile = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.record(
    {
      to: fc.oneof(
        fc.constantFrom('alice', 'toString', '__proto__', '*', 'role:x', '', 'a'.repeat(300)),
        fc.array(fc.string(), { maxLength: 3 }),
      ),
      body: fc.oneof(fc.string(), fc.constant('</handoff-body>'), fc.constant('x'.repeat(70_000))),
      message_id: fc.oneof(fc.string(), fc.constant('01JD3V7W2K8Q5X9Y4Z6A1B2C3D')),
      thread: fc.string(),
      sla_seconds: fc.oneof(fc.integer(), fc.double(), fc.constant(1e20)),
      outcome: fc.string(),
      summary: fc.string(),
      limit: fc.oneof(fc.integer(), fc.constant(-1)),
      attachments: fc.array(
        fc.record({ path: fc.constantFrom('../etc/passwd', '/etc/passwd', 'x\n</handoff-body>', 'nope') }),
        { maxLength: 2 },
      ),
    },
    { requiredKeys: [] },
  ),
);

describe('fuzzing every boundary of the hub', () => {
  let hub: HubProcess;
  let alice: Agent;
  let control: ControlClient;
  const acknowledged: string[] = [];
  let lastSeq = 0;
  /** The hub serves, and what the last case stored reads back: alice's new mail, her ledger, a send. */
  const alive = async () => {
    await alice.ok('inbox', { limit: 200, after_seq: lastSeq });
    await alice.ok('pending');
    await alice.ok('get_unread_summary');
    const r = await alice.ok('send_handoff', { to: 'alice', body: `still here ${acknowledged.length}`, insist: true });
    acknowledged.push(r.message_id);
    lastSeq = r.seq;
  };

  before(async () => {
    hub = await startHub();
    alice = await connectAgent({ socket: hub.socket, name: 'alice' });
    control = await connectControl(hub.socket, 'fuzz');
  });
  after(async () => {
    control?.close();
    await alice?.close();
    await hub?.stop();
  });

  it('hello lines of every kind, and what follows them, never take the hub down', { timeout: 120_000 }, async () => {
    const hello = fc.record(
      {
        handoff: fc.oneof(fc.constant(1), fc.jsonValue()),
        kind: fc.oneof(fc.constantFrom('mcp', 'control', 'hook', 'other'), fc.string()),
        identity: fc.oneof(fc.constantFrom('toString', '__proto__', 'bob'), fc.string()),
        session: fc.string(),
        roles: fc.jsonValue(),
        client: fc.string(),
        cli: fc.constantFrom('claude', 'codex', 'x'),
        phase: fc.constantFrom('tool', 'stop', 'wait', 'x'),
        event: fc.string(),
        ancestors: fc.jsonValue(),
        waitMs: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(hello, fc.array(fc.string(), { maxLength: 3 }), async (h, lines) => {
        await new Promise<void>((resolve) => {
          const s = createConnection(hub.socket);
          s.on('error', () => resolve());
          s.on('connect', () => {
            s.write(`${JSON.stringify(h)}\n${lines.join('\n')}\n`);
            // sleep: the scenario: a client that writes its lines and leaves a moment later
            setTimeout(() => {
              s.destroy();
              resolve();
            }, 20);
          });
          s.resume();
        });
        await alive();
      }),
      { numRuns: RUNS },
    );
  });

  it('every MCP tool answers hostile arguments with a result or a clear error', { timeout: 180_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...TOOLS), hostile, async (tool, args) => {
        try {
          const r = await alice.call(
            tool,
            (args && typeof args === 'object' && !Array.isArray(args) ? args : { value: args }) as Record<
              string,
              unknown
            >,
          );
          if (r.isError)
            assert.match(JSON.stringify(r.content), /error|Invalid|must|expected/i, `${tool}: a rejection says why`);
        } catch (e) {
          assert.match(
            (e as Error).message,
            /MCP error -3260[02]|Invalid|expected/i,
            `${tool}: a protocol error says why: ${(e as Error).message}`,
          );
        }
        await alive();
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('every control request answers hostile params with a result or a named error', { timeout: 120_000 }, async () => {
    const controlParams = fc.oneof(
      hostile,
      fc.record(
        {
          as: fc.oneof(fc.constantFrom('alice', 'toString', '__proto__'), fc.string()),
          identity: fc.constantFrom('alice', 'valueOf', ''),
          to: fc.oneof(fc.constant(['alice']), fc.array(fc.jsonValue(), { maxLength: 2 })),
          body: fc.oneof(fc.string(), fc.jsonValue()),
          slaSeconds: fc.oneof(fc.constant(1e20), fc.double(), fc.integer()),
          id: fc.oneof(fc.constant('01JD3V7W2K8Q5X9Y4Z6A1B2C3D'), fc.string()),
          kind: fc.constantFrom('read', 'ack', 'result', 'pwned'),
          outcome: fc.constantFrom('done', 'stuck', 'x'),
          by: fc.string(),
          thread: fc.string(),
          limit: fc.jsonValue(),
          // handoff/export: a cursor the hub never gave, and times and flags of any shape
          after: fc.oneof(fc.string(), fc.constantFrom('h:1:99999999999', 'h:-1:0', 'o:', 'o:zz', 'h:999999999:0')),
          since: fc.oneof(fc.integer(), fc.double(), fc.string()),
          open: fc.jsonValue(),
          // handoff/retention: a setting whose values are hostile (a valid one drops only sealed
          // segments, and this store never fills one)
          set: fc.oneof(
            fc.jsonValue(),
            fc.record(
              {
                keepDays: fc.oneof(fc.double({ noNaN: false }), fc.constantFrom(0, -1, 1e20, '30', '30d')),
                keepGiB: fc.oneof(fc.double({ noNaN: false }), fc.constantFrom(0, -1, '1', null)),
                keepForever: fc.boolean(),
              },
              { requiredKeys: [] },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
      fc.record({
        // A send that would pass a careless check: only one field is hostile.
        as: fc.constant('alice'),
        to: fc.constant(['alice']),
        body: fc.string({ minLength: 1 }),
        slaSeconds: fc.oneof(fc.constant(1e20), fc.constant(-5), fc.double({ noNaN: false })),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CONTROL), controlParams, async (method, params) => {
        await control.connection.sendRequest(method, params).then(
          () => undefined,
          (e: { message: string }) => {
            assert.ok(e.message.length > 0, `${method}: the error says something`);
          },
        );
        await alive();
      }),
      {
        numRuns: RUNS,
        // The inputs that broke it before (issue 9), always tried beside the random ones.
        examples: [
          ['handoff/send', { as: 'alice', to: ['alice'], body: 'x', slaSeconds: 1e20 }],
          ['handoff/send', { to: ['alice'], body: 'no sender' }],
          ['handoff/receipt', { as: 'alice', id: '01JD3V7W2K8Q5X9Y4Z6A1B2C3D', kind: 'pwned' }],
          ['handoff/retention', { set: { keepDays: 1e20, keepGiB: -1 } }],
          ['handoff/retention', { set: { keepDays: 1.5 } }],
          ['handoff/export', { after: 'h:0:99999999999', open: true }],
          ['handoff/export', { after: 'o:../../x' }],
        ],
      },
    );
  });

  it('the Matrix wire decoders return a value or a reason for any event content, never throws', () => {
    // Near-valid relations and batch entries too, so the schemas are reached past their first check.
    const relation = fc.record(
      {
        rel_type: fc.constantFrom('m.thread', 'm.annotation', 'm.reference', 'x'),
        event_id: fc.oneof(fc.string(), fc.constant('$h')),
        key: fc.oneof(fc.string(), fc.constant('✅')),
        is_falling_back: fc.oneof(fc.boolean(), fc.string()),
        'm.in_reply_to': fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.record({ event_id: fc.oneof(fc.string(), fc.constant('$h')) }),
        ),
      },
      { requiredKeys: [] },
    );
    const deep = fc.integer({ min: 1, max: 60 }).map((n) => {
      let v: unknown = 'x';
      for (let i = 0; i < n; i++) v = { v };
      return v;
    });
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 5 }),
        fc.jsonValue({ maxDepth: 3 }),
        relation,
        deep,
        (content, other, rel, nested) => {
          const c = {
            'org.handoff.message': content,
            'org.handoff.receipt': other,
            body: other,
            msgtype: 'm.text',
            'm.relates_to': rel,
            'org.handoff.batch': [{ message: content }, { receipt: other }, { message: nested }, other],
          } as Record<string, unknown>;
          const results = [
            readMessage(c),
            readReceipt(c),
            readBatch(c),
            readReply(c),
            readReaction(c),
            readReply({ ...c, body: 'text' }),
            readEvent({ event_id: '$e', type: other, sender: '@x:y', origin_server_ts: 0, content }),
            readEvent(content),
            readAnnouncement({
              type: 'org.handoff.node',
              sender: '@x:y',
              content: c,
              state_key: JSON.stringify(other),
              event_id: '$e',
              origin_server_ts: 0,
            } as never),
            readMessage({ 'org.handoff.message': nested }),
            readBatch({ 'org.handoff.batch': nested }),
          ];
          for (const r of results) assert.ok(typeof r === 'string' || (r && typeof r === 'object'));
          assert.equal(verifyWire(FUZZ_KEY, content), false, 'no signature by that key in random data');
        },
      ),
      { numRuns: RUNS * 10 },
    );
  });

  it(
    'after the run and a kill -9, the store reopens with every acknowledged handoff',
    { timeout: 60_000 },
    async () => {
      await alice.close();
      control.close();
      await hub.kill9();
      hub = await hub.restart();
      alice = await connectAgent({ socket: hub.socket, name: 'alice' });
      control = await connectControl(hub.socket, 'fuzz');
      const missing: string[] = [];
      for (const id of acknowledged)
        if (!(await control.connection.sendRequest('handoff/message', { id }))) missing.push(id);
      assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.length} acknowledged handoffs lost`);
      assert.ok(acknowledged.length > RUNS, `the run acknowledged ${acknowledged.length} handoffs`);
    },
  );
});
