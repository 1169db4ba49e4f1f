// A hub's first answer, for the start benches (start.bench.ts, history.bench.ts): what a client
// waits for, not the hub's "listening" line.
import { createConnection } from 'node:net';
import { HELLO_VERSION } from '../../extension/protocol/helloVersion';
import type { HookHello } from '../../extension/protocol/hook';

/** A hook's exchange as bob: hello, the hello reply, the answer (the first five of his open mail). */
export function firstAnswer(socket: string): Promise<void> {
  const hello: HookHello = {
    handoff: HELLO_VERSION,
    kind: 'hook',
    cli: 'claude',
    phase: 'tool',
    event: 'PostToolUse',
    identity: 'bob',
    session: 'bench',
    ancestors: [],
  };
  return new Promise((resolve, reject) => {
    const c = createConnection(socket, () => c.write(`${JSON.stringify(hello)}\n`));
    let text = '';
    c.on('data', (d) => {
      text += d.toString();
      if (text.split('\n').length > 2) {
        c.destroy();
        resolve();
      }
    });
    c.on('error', reject);
  });
}
