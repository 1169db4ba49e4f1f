// What a window on another window's hub says, once: where the hub runs and what this window can
// do there — in the log and at the top of the view, instead of errors and a refused ACK.

export function sharedHubLine(pid: number | undefined, person: boolean): string {
  const acts = person
    ? 'this window shows the bus, sends and answers your inbox'
    : 'this window shows the bus and sends; ACK and results for your inbox are in the window that started the hub';
  return `The Handoff hub runs in another window (pid ${pid ?? '?'}): ${acts}. This window takes it over when that one closes.`;
}
