// While no hub is there the bridge answers `initialize` and `tools/list` itself: its answers must
// be exactly a hub's, or the client's session would change under it when a hub arrives.
// `npm run catalog` rewrites the catalog from the hub's registrations.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { catalogAnswer, initializeResult } from '../../extension/bridge/standIn';
import { Hub } from '../../extension/hub/hub';
import { listen } from '../../extension/hub/serve/listen';
import { CATALOG_METHODS, PROTOCOL_VERSIONS } from '../../extension/protocol/mcp';
import { rawAgent, type RawAgent } from '../helpers/rawAgent';
import { ROOT, tempDir } from '../helpers/hubProcess';

describe('the bridge answers for a missing hub exactly as a hub would', () => {
  let hub: Hub;
  let server: Server;
  let agent: RawAgent;
  let initialized: any;

  before(async () => {
    hub = new Hub({ workspace: tempDir('contract-ws'), storeDir: tempDir('contract-store'), node: 'n' });
    await hub.start();
    const socket = join(tempDir('contract-sock'), 'hub.sock');
    server = await listen(hub, socket, { heartbeatMs: 60_000, log: () => undefined });
    agent = await rawAgent(socket, { identity: 'tess' });
    agent.request(0, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    initialized = (await agent.response(0)).result;
    agent.notify('notifications/initialized');
  });
  after(async () => {
    agent.close();
    server.close();
    await hub.close();
  });

  it('speaks the protocol versions the SDK speaks', () => {
    assert.deepEqual([...PROTOCOL_VERSIONS], SUPPORTED_PROTOCOL_VERSIONS);
  });

  it('initialize: the same capabilities, server info and instructions', () => {
    assert.deepEqual(initializeResult('2025-06-18'), initialized);
  });

  it('the lists (tools, resources, templates, prompts): the same answers', async () => {
    const answers: Record<string, unknown> = {};
    for (const [i, method] of CATALOG_METHODS.entries()) {
      agent.request(10 + i, method, {});
      const { result, error } = await agent.response(10 + i);
      answers[method] = result === undefined ? { error } : { result };
    }
    if (process.env.HANDOFF_WRITE_CATALOG)
      writeFileSync(join(ROOT, 'extension', 'protocol', 'mcpCatalog.json'), `${JSON.stringify(answers, null, 2)}\n`);
    for (const [i, method] of CATALOG_METHODS.entries()) {
      const { id: _, jsonrpc: __, ...standIn } = catalogAnswer({ jsonrpc: '2.0', id: i, method })!;
      assert.deepEqual(
        standIn,
        answers[method],
        `${method}: the catalog drifted from the hub: run \`npm run catalog\``,
      );
    }
  });
});
