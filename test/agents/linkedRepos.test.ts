// Two repositories on one machine, linked as the README says (`handoff link` in each), with the
// real Claude Code CLI in the backend and the real Codex CLI in the frontend, each driven by a
// scripted model: Claude's model sends to bob@frontend, the handoff surfaces in Codex's model,
// which ACKs it and reports a result, and Claude's get_receipts shows both written by bob in
// frontend. Then the same with frontend's hub stopped at the send: answered queued, delivered
// once when that hub starts again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connectAgent } from '../helpers/agent';
import { agentHome, cliInstalled, runAgent, type AgentHome } from '../helpers/cli/agents';
import { handoffConnect } from '../helpers/cli/connect';
import { startScriptedModel, type ScriptedModel } from '../helpers/cli/scriptedModel';
import { DIST, NODE, spawnHub, stoppable, tempDir } from '../helpers/hubProcess';
import { skipOrFail } from '../helpers/skip.mjs';
import { git } from '../helpers/git';
import { waitUntil } from '../helpers/wait';

function repository(name: string): string {
  const root = join(realpathSync(tempDir(`repo-${name}`)), name);
  mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'commit', '-q', '--allow-empty', '-m', 'init');
  return root;
}

/** One non-interactive turn: the script's tool calls, then text; every tool result kept. */
async function turn(
  model: ScriptedModel,
  h: AgentHome,
  folder: string,
  steps: (seen: string, results: string[]) => { tool: string; args?: Record<string, unknown> } | undefined,
): Promise<string[]> {
  const results: string[] = [];
  model.requests.length = 0;
  model.setScript(({ request, lastToolResult }) => {
    if (lastToolResult !== undefined) results.push(lastToolResult);
    return steps(request.text, results) ?? { text: 'Done.' };
  });
  const run = await runAgent(h, folder, 'Do the Handoff steps.', { timeoutMs: 150_000 });
  assert.equal(run.timedOut, false, `${h.cli} in ${folder} finished: ${run.stderr.slice(-2000)}`);
  assert.deepEqual(model.errors, []);
  return results;
}

function handoff(folder: string, env: Record<string, string>, ...args: string[]): string {
  return execFileSync(NODE, [join(DIST, 'cli.js'), ...args], { cwd: folder, env, encoding: 'utf8' });
}

const ID = /[0-9A-HJKMNP-TV-Z]{26}/;

describe('two linked repositories: Claude Code in one, Codex in the other', () => {
  it(
    'a handoff to bob@frontend surfaces in Codex, which ACKs and reports; the receipts come back; then queued while frontend is down',
    { timeout: 900_000 },
    async (t) => {
      if (!cliInstalled('claude') || !cliInstalled('codex'))
        return skipOrFail(t, 'claude and codex CLIs (npm install)');
      const backend = repository('backend');
      const frontend = repository('frontend');
      const claudeModel = await startScriptedModel(() => ({ text: 'Done.' }), { maxRequests: 20 });
      const codexModel = await startScriptedModel(() => ({ text: 'Done.' }), { maxRequests: 20 });
      const hc = agentHome('claude', claudeModel.url);
      const hx = agentHome('codex', codexModel.url);
      const storeA = join(tempDir('store-backend'), 'store');
      const storeB = join(tempDir('store-frontend'), 'store');
      const start = (workspace: string, store: string, home: string) =>
        spawnHub({ workspace, store, socket: null, env: { HOME: home } });
      const a = start(backend, storeA, hc.home);
      let b = start(frontend, storeB, hx.home);
      await Promise.all([a.ready, b.ready]);
      const hubA = stoppable(a.proc);
      let hubB = stoppable(b.proc);
      try {
        // Set up as the README says: connect each CLI, link each repository to the other.
        handoffConnect('claude', backend, hc.env, 'alice');
        handoffConnect('codex', frontend, hx.env, 'bob');
        assert.match(handoff(backend, hc.env, 'link', frontend), /this repository is backend/);
        handoff(frontend, hx.env, 'link', backend);

        // bob's first session makes him known; backend learns bob@frontend over the link.
        const who = await turn(codexModel, hx, frontend, (_, r) => (r.length === 0 ? { tool: 'whoami' } : undefined));
        assert.match(who[0] ?? '', /in repository frontend|"repository":"frontend"/, who[0]);
        await waitUntil(
          () => /link frontend .*: linked .*bob@frontend/.test(handoff(backend, hc.env, 'status')),
          60_000,
          () => `backend linked to frontend and knowing bob: ${handoff(backend, hc.env, 'status')}`,
        );

        const needle1 = `linked-one-${Date.now().toString(36)}`;
        const sent = await turn(claudeModel, hc, backend, (_, r) =>
          r.length === 0
            ? { tool: 'list_peers' }
            : r.length === 1
              ? { tool: 'send_handoff', args: { to: 'bob@frontend', body: `Add the login form ${needle1}` } }
              : undefined,
        );
        // A CLI shows the tool's text or its structured content: either says it.
        assert.match(
          sent[0] ?? '',
          /bob@frontend: in the linked repository frontend|"identity":"bob@frontend",[^}]*"repository":"frontend"/,
          sent[0],
        );
        assert.match(
          sent[1] ?? '',
          /in the hub of the linked repository frontend|"state":"in_their_hub"|NOT in frontend's hub yet|"repository":"frontend"/,
          sent[1],
        );
        const id1 = ID.exec(sent[1] ?? '')?.[0];
        assert.ok(id1, `a message id in ${sent[1]}`);

        let step = 0;
        const took = await turn(codexModel, hx, frontend, (seen) => {
          if (step === 0 && seen.includes(needle1)) {
            step = 1;
            return { tool: 'ack', args: { message_id: id1 } };
          }
          if (step === 1) {
            step = 2;
            return { tool: 'report_result', args: { message_id: id1, outcome: 'done', summary: 'form added' } };
          }
          return undefined;
        });
        assert.equal(codexModel.surfacings(needle1), 1, "the handoff entered Codex's model once");
        assert.equal(took.length, 2, `ACK and result: ${took.join(' | ')}`);

        // Claude's get_receipts: both written by bob, in frontend.
        let receipts = '';
        await waitUntil(
          async () => {
            const r = await turn(claudeModel, hc, backend, (_, res) =>
              res.length === 0 ? { tool: 'get_receipts', args: { message_id: id1 } } : undefined,
            );
            receipts = r[0] ?? '';
            return /ack/i.test(receipts) && /done/.test(receipts) && /bob@frontend/.test(receipts);
          },
          120_000,
          () => `get_receipts with the ACK and the result by bob@frontend: ${receipts}`,
        );

        // frontend's hub stopped at the send: queued, then delivered once when it starts.
        await hubB.stop();
        const needle2 = `linked-two-${Date.now().toString(36)}`;
        const queued = await turn(claudeModel, hc, backend, (_, r) =>
          r.length === 0 ? { tool: 'send_handoff', args: { to: 'bob@frontend', body: `And ${needle2}` } } : undefined,
        );
        assert.match(
          queued[0] ?? '',
          /NOT in frontend's hub yet|"state":"in_outbox"[^}]*"repository":"frontend"/,
          queued[0],
        );
        assert.match(queued[0] ?? '', /queued/, queued[0]);
        assert.doesNotMatch(queued[0] ?? '', /pushed to|"state":"pushed"/);
        const id2 = ID.exec(queued[0] ?? '')?.[0];
        assert.ok(id2);
        b = start(frontend, storeB, hx.home);
        await b.ready;
        hubB = stoppable(b.proc);
        let acked2 = false;
        await turn(codexModel, hx, frontend, (seen) => {
          if (!acked2 && seen.includes(needle2)) {
            acked2 = true;
            return { tool: 'ack', args: { message_id: id2 } };
          }
          return undefined;
        });
        assert.equal(codexModel.surfacings(needle2), 1, 'the queued handoff entered Codex once');
        assert.equal(codexModel.surfacings(needle1), 0, 'the first, finished, did not come back');

        // Counted at backend's hub, as alice: both ACKed by bob@frontend, each pushed at most once there.
        const observer = await connectAgent({ socket: '', name: 'alice', cwd: backend, env: { HOME: hc.home } });
        try {
          for (const id of [id1, id2]) {
            const d = await waitUntil(
              async () => {
                const x = (await observer.ok('get_receipts', { message_id: id })).deliveries[0];
                return x.state === 'acked' || x.state === 'done' ? x : undefined;
              },
              60_000,
              `${id} ACKed in backend's ledger`,
            );
            assert.equal(d.recipient, 'bob@frontend');
            assert.ok(d.pushes.length <= 1, `pushed at most once: ${JSON.stringify(d.pushes)}`);
            assert.ok(
              d.receipts.every((r: { by: string; node: string }) => r.by === 'bob@frontend' && r.node === 'frontend'),
            );
          }
        } finally {
          await observer.close();
        }
        console.log(
          '# claude in backend → codex in frontend: 2 handoffs (one while frontend was down), 2 ACKs, 1 result, 0 lost, 0 twice',
        );
      } finally {
        await claudeModel.close();
        await codexModel.close();
        await hubA.stop().catch(() => undefined);
        await hubB.stop().catch(() => undefined);
      }
    },
  );
});
