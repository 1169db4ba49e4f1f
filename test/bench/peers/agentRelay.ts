// Agent Relay (npm agent-relay): its MCP server (`agent-relay mcp`) and its local broker both
// talk to Relaycast, a hosted service (https://cast.agentrelay.com); the broker says "broker
// requires Relaycast" and has no offline mode. So it is tried, not measured: the bench starts
// the broker and prints why it did not come up.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { tempDir } from '../../helpers/hubProcess';
import { peerDir } from './server';

export const RELAY_VERSION = '9.1.6';

/** Why Agent Relay cannot be measured here: the broker's own error, or its install's. */
export function agentRelayUnavailable(): string {
  let dir: string;
  try {
    dir = peerDir(`agent-relay-${RELAY_VERSION}`, 'setup-peers-agent-relay');
  } catch (e) {
    return (e as Error).message;
  }
  const state = tempDir('peer-agent-relay');
  const broker = join(dir, 'node_modules', '@agent-relay', 'broker-linux-x64', 'bin', 'agent-relay-broker');
  const r = spawnSync(
    broker,
    ['init', '--instance-name', 'bench', '--channels', 'general', '--persist', '--api-port', '0', '--state-dir', state],
    { cwd: state, encoding: 'utf8', timeout: 30_000, env: { ...process.env, AGENT_RELAY_TELEMETRY_DISABLED: '1' } },
  );
  const out = `${r.stdout}\n${r.stderr}`;
  const cause = /Error: (.*)\s+Caused by:\s+(.*)/.exec(out);
  if (cause) return `its broker needs the hosted Relaycast service: "${cause[1]}: ${cause[2].trim()}"`;
  return `its broker did not start offline (exit ${r.status ?? r.signal}): ${out.trim().split('\n').slice(-3).join(' / ')}`;
}
