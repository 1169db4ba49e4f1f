// What connect says it did, the same words from the CLI and the editor's Connect commands.
import type { AgentCli, Connected } from './index';

const LABEL: Record<AgentCli, string> = {
  claude: 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  vscode: "VS Code's agent",
};

export function agentLabel(cli: AgentCli): string {
  return LABEL[cli];
}

/** Which folder it chose, what the agent is called here and elsewhere, and what to do next. */
export function connectedText(cli: AgentCli, c: Connected): string {
  const said = connectedLine(cli, c);
  return c.limits.length ? `${said}\nNot reached everywhere: ${c.limits.join(' ')}` : said;
}

function connectedLine(cli: AgentCli, c: Connected): string {
  const label = c.version ? `${LABEL[cli]} ${c.version}` : LABEL[cli];
  if (cli === 'vscode')
    return `${label} is connected for ${c.workspace} as "${c.name}": its hooks act from its next chat session in this folder.`;
  if (c.how === 'pinned')
    return `${label} is connected for ${c.workspace} as "${c.name}". Start ${cli} there (or restart a running session) to pick it up.`;
  const why = c.how === 'recorded' ? 'named by connect --name' : 'its default name there';
  const others =
    cli === 'claude' || cli === 'codex' || cli === 'gemini'
      ? ` In any other worktree its agent is "${cli}-<branch>" unless named there with connect --name; a recycled worktree on the same branch keeps its name.`
      : '';
  return `${label} is connected for the repository ${c.workspace} (every worktree and subfolder, including ones made later). In ${c.where} the agent is "${c.name}" (${why}).${others} Start ${cli} (or restart a running session) to pick it up.`;
}
