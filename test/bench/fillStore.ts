// A store with n open handoffs from alice to bob, filled in process by 16 senders (fast), then
// closed with a checkpoint, so a hub starts from state.json rather than a long journal.
import { Hub } from '../../extension/hub/hub';
import { ROOT } from '../helpers/hubProcess';
import { body } from './stats';

export async function fillStore(storeDir: string, n: number): Promise<void> {
  const hub = new Hub({ workspace: ROOT, storeDir, node: 'bench' });
  await hub.start();
  for (const name of ['alice', 'bob']) await hub.remember(name);
  const alice = { identity: 'alice', session: 'fill', node: 'bench' };
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < n) await hub.send(alice, { to: ['bob'], body: body(next++), insist: true });
    }),
  );
  await hub.close();
}
