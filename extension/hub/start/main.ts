// The hub process entry: `node dist/hub.js --workspace DIR` (the extension adds --node-ipc).
import { parseHubArgs, runHub } from './run';

runHub(parseHubArgs(process.argv.slice(2))).catch((e) => {
  process.stderr.write(`handoff hub: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
