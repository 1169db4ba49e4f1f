// dist/hook.js: what installed hooks run (the `handoff hook` command without the CLI's bundle).
import { runHook } from './main';

runHook(process.argv.slice(2)).then(
  (code) => process.exit(code),
  () => process.exit(0),
);
