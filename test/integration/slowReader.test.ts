// A reader that stops reading (#44): the agent CLI behind a real bridge is SIGSTOPped while 400
// handoffs of 60 KB (23 MiB) arrive. The hub's queue for that connection is bounded
// (serve/mcp/socketTransport.ts MAX_QUEUED_BYTES): past it the connection is closed, and when the
// client goes on its bridge reconnects and the hub replays: first what it never pushed, then what
// it had, flagged `replayed`, bounded (hub.ts replayLimit), the rest waiting in the inbox.
// Counted: 0 lost, 0 pushed twice as new, the hub's memory not grown by what was carried.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slowReader } from '../helpers/slowReader';

describe('a reader that stops reading', () => {
  it('is cut off at a bounded queue and replayed when it comes back: 0 lost, 0 pushed twice', async () => {
    const r = await slowReader(400, 60_000);
    console.log(JSON.stringify(r));
    assert.equal(r.sent, 400);
    assert.ok(r.cutOff >= 1, 'the hub closed the connection that stopped reading');
    assert.equal(r.lost, 0);
    assert.equal(r.liveTwice, 0);
    assert.ok(r.notices + r.replayed > 0, 'the session was replayed when it came back');
    // 23 MiB carried; the connection's queue held at most its bound and one message of it.
    assert.ok(r.queuedAtCutKiB <= 8 * 1024 + 64, `${r.queuedAtCutKiB} KiB queued when it was cut`);
  });
});
