// What a window on a hub it did not start says, once: where the hub runs and what this window can
// do there — in the log and at the top of the view, instead of errors and a refused ACK.

export function sharedHubLine(pid: number | undefined, person: boolean, headless = false): string {
  // A hub of `handoff hub` has no window: "in another window" sent the person looking for one.
  if (headless)
    return `The Handoff hub runs as the command “handoff hub” (pid ${pid ?? '?'}), outside VS Code: this window shows the bus and sends. ACK and results for your inbox need a hub VS Code runs: stop that one and this window starts its own.`;
  const acts = person
    ? 'this window shows the bus, sends and answers your inbox'
    : 'this window shows the bus and sends; ACK and results for your inbox are in the window that started the hub';
  return `The Handoff hub runs in another window (pid ${pid ?? '?'}): ${acts}. This window takes it over when that one closes.`;
}
