// The CLI's way to the hub of the workspace it runs in (or --hub), and the one sentence it says
// when there is none.
import { connectControl, type ControlClient } from '../shared/controlClient';
import { hubCandidates } from '../shared/discovery';

/**
 * Connected to the hub, or undefined once `who` (the command's name) has said on stderr that no
 * hub answers and how to start one; `more` is what the command adds to that sentence.
 */
export async function connectHub(who: string, hub: string | undefined, more = ''): Promise<ControlClient | undefined> {
  const env = hub ? { ...process.env, HANDOFF_HUB: hub } : process.env;
  const { sockets, workspace } = hubCandidates(env, process.cwd());
  try {
    return await connectControl(sockets);
  } catch (e) {
    process.stderr.write(
      `${who}: no hub for the workspace ${workspace} (tried ${sockets.join(', ')}): ${(e as Error).message}.${more} Start one with \`handoff hub --workspace DIR\` or open the folder in VS Code with Handoff.\n`,
    );
    return undefined;
  }
}
