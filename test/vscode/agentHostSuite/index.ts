// Extension-host entry for the runs with VS Code's Agent Host (test/vscode/agentHost*.test.ts): it
// starts an Agent Host session of HANDOFF_TEST_AGENT (claude, the default, or codex) with the
// test's prompt, then waits until the test outside, which holds the scripted model and the hub,
// says it is done (HANDOFF_TEST_DONE appears).
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';

const pause = () => new Promise((r) => setTimeout(r, 100)); // sleep: the pause between polls

export async function run(): Promise<void> {
  const done = process.env.HANDOFF_TEST_DONE!;
  await vscode.extensions.getExtension('handoff.handoff-bus')!.activate();
  const command = `workbench.action.chat.openNewChatSessionInPlace.agent-host-${process.env.HANDOFF_TEST_AGENT ?? 'claude'}`;
  // Registered once the Agent Host has listed its agents, after the window opens.
  for (let i = 0; i < 600 && !(await vscode.commands.getCommands(true)).includes(command); i++) await pause();
  await vscode.commands.executeCommand(command, 'sidebar');
  console.log('# agent host session opened');
  await vscode.commands.executeCommand('workbench.action.chat.open', { query: process.env.HANDOFF_TEST_PROMPT });
  console.log('# prompt sent');
  while (!existsSync(done)) await pause();
}
