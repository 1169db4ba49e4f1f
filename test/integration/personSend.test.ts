// A send from the person's CLI reads to the agent as the person's, named as the editor names them:
// `handoff send` without --as is the person (their editor identity when a window of this hub says
// it, else their user name as the editor makes it), and the agent's context says "a person", not
// "data from another agent". A script's send (--as build-bot) still reads as an agent's.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PresenceRequest } from '../../extension/protocol/control';
import { connectControl, type ControlClient } from '../../extension/shared/controlClient';
import { osPersonName } from '../../extension/shared/personName';
import { connectAgent, type Agent } from '../helpers/agent';
import { DIST, NODE, startHub, type HubProcess } from '../helpers/hubProcess';

describe("a send from the person's CLI", { timeout: 120_000 }, () => {
  let hub: HubProcess;
  let bob: Agent;
  let window: ControlClient | undefined;
  before(async () => {
    hub = await startHub();
    bob = await connectAgent({ socket: hub.socket, name: 'bob' });
  });
  after(async () => {
    window?.close();
    await bob?.close();
    await hub?.stop();
  });

  const send = (...args: string[]) => {
    const env: NodeJS.ProcessEnv = { ...process.env, HANDOFF_HUB: hub.socket };
    delete env.HANDOFF_AGENT;
    const r = spawnSync(NODE, [join(DIST, 'cli.js'), 'send', '--to', 'bob', '--json', ...args], {
      encoding: 'utf8',
      env,
      timeout: 30_000,
    });
    assert.equal(r.status, 0, r.stderr);
    return (JSON.parse(r.stdout) as { message_id: string }).message_id;
  };
  /** What bob's model reads of a handoff: the inbox tool's text (the hooks and pushes render it the same). */
  const reads = async (id: string) => {
    const text = ((await bob.call('get_message', { message_id: id })).content as { text?: string }[])[0].text ?? '';
    return text.split('\n').slice(0, 2).join('\n');
  };

  it('reads as the person, by the name the editor gives them, not as another agent', async () => {
    const me = osPersonName();
    const text = await reads(send('please review the parser'));
    assert.match(text, new RegExp(`from ${me} \\(a person\\) to bob`));
    assert.match(text, new RegExp(`a request from ${me}, a person, sent through Handoff`));
    assert.doesNotMatch(text, /another agent/);
  });

  it("with a window of this hub naming its person maria, the CLI's send is maria's", async () => {
    window = await connectControl(hub.socket, 'vscode');
    await window.connection.sendRequest(PresenceRequest.method, { identity: 'maria', focused: true });
    const text = await reads(send('and the lexer'));
    assert.match(text, /from maria \(a person\) to bob/);
  });

  it('a script sending as another name reads as an agent', async () => {
    const text = await reads(send('--as', 'build-bot', 'the build is red'));
    assert.match(text, /from build-bot to bob/);
    assert.match(text, /data from another agent/);
  });
});
