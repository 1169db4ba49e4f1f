// Who is on this hub: names made known (addressable), live sessions attached and detached, the
// people at editor windows. A name is recorded before its session shows as live, so sending to a
// live peer always works; a session closed while that was written is never listed.
import { caseTwin, caseTwinMessage } from '../bus/identity';
import { bridgeRefusal, editorAgentRefusal, statedRefusal } from './agentTree';
import { BusError } from '../bus/errors';
import type { Journal } from '../state/journal';
import type { People, WindowReport } from './people';
import type { Pushes } from '../deliver/pushes';
import { sessionLabel, type Session, type SessionRegistry } from './sessions';
import type { Log } from '../../protocol/hubLog';
import type { ProcessCommand } from '../../shared/proc';

export interface RosterDeps {
  journal: Journal;
  sessions: SessionRegistry;
  people: People;
  pushes: Pushes;
  now: () => number;
  log: Log;
  /** The extension hosts of this hub's editor windows (pids): where VS Code's own agent runs. */
  extensionHosts: () => ReadonlySet<number>;
  /** What a process runs (/proc), to tell a Copilot process from another agent's. */
  commandOf: (pid: number) => ProcessCommand | undefined;
}

export class Roster {
  /** Names being recorded right now: a case twin racing one must see it before its commit lands. */
  private readonly naming = new Set<string>();

  constructor(private readonly deps: RosterDeps) {}

  /** Makes a name known (addressable) without a live session: the person at the editor. */
  async remember(identity: string, roles?: string[]): Promise<void> {
    const twin = this.caseTwin(identity);
    if (twin) throw new BusError('invalid_identity', caseTwinMessage(identity, twin));
    const known = this.deps.journal.state.identities[identity];
    const sameRoles = !roles || (known && known.roles.join() === roles.join());
    if (known && sameRoles && this.deps.now() - known.lastSeen < 60_000) return;
    this.naming.add(identity);
    try {
      await this.deps.journal.commit([
        { type: 'identity', name: identity, at: this.deps.now(), roles: roles ?? known?.roles ?? [] },
      ]);
    } finally {
      this.naming.delete(identity);
    }
  }

  /** A known identity `name` would be mistaken for (same letters, other case). */
  caseTwin(name: string): string | undefined {
    const identities = this.deps.journal.state.identities;
    if (identities[name] || this.naming.has(name)) return undefined;
    return caseTwin([...Object.keys(identities), ...this.naming], name);
  }

  /**
   * The agent's MCP session is initialised: it goes live and gets its mail. A name already on
   * record with these roles (the agent's hello recorded it) goes live at once, so a call right
   * behind `initialized` finds its session listed. A case twin is refused whatever the transport checked.
   */
  async attach(session: Session): Promise<void> {
    const twin = this.caseTwin(session.identity);
    if (twin) throw new BusError('invalid_identity', caseTwinMessage(session.identity, twin));
    const refusal = this.refusal(session);
    if (refusal) throw refusal;
    const known = this.deps.journal.state.identities[session.identity];
    if (!known || (session.roles.length > 0 && known.roles.join() !== session.roles.join())) {
      try {
        await this.remember(session.identity, session.roles);
      } catch (e) {
        this.deps.log(`could not record identity ${session.identity}: ${(e as Error).message}`, 'error');
      }
    }
    if (!session.isOpen()) return; // closed while we were writing: never list a dead peer
    // Again, in the same turn as the add: a session may have attached while the name was written.
    const late = this.refusal(session);
    if (late) throw late;
    // A proven session takes its identity back from any session that only stated its process.
    if (session.ancestry)
      for (const stated of this.deps.sessions.forIdentity(session.identity))
        if (!stated.ancestry && stated.key !== session.key) {
          this.deps.log(
            `session ${sessionLabel(stated.key)} (${stated.identity}) closed: its process is stated, and a proven session of ${stated.identity} attached`,
            'warn',
          );
          stated.close(`a proven session of ${stated.identity} attached`);
          this.detach(stated);
        }
    this.deps.sessions.add(session);
    this.deps.log(`session ${sessionLabel(session.key)} attached as ${session.identity} (${session.client})`);
    this.deps.journal.changed();
    await this.deps.pushes.replay(session);
  }

  /** Why this session may not act for its identity beside the live ones (agentTree.ts), if it may not. */
  private refusal(session: Session): BusError | undefined {
    const live = this.deps.sessions.all();
    return (
      bridgeRefusal(session, live) ??
      statedRefusal(session, live) ??
      editorAgentRefusal(session, this.deps.extensionHosts(), this.deps.commandOf)
    );
  }

  detach(session: Session): void {
    if (!this.deps.sessions.remove(session)) return;
    this.deps.log(`session ${sessionLabel(session.key)} (${session.identity}) detached`);
    // "Last seen" is when its last session left, not when it first connected.
    this.deps.journal
      .commit([{ type: 'identity', name: session.identity, at: this.deps.now(), roles: session.roles }])
      .catch((e) => this.deps.log(`could not record when ${session.identity} left: ${(e as Error).message}`, 'error'));
    this.deps.journal.changed();
  }

  /** An editor window says who sits at it and whether it has focus; the name becomes addressable. */
  async reportWindow(window: string, report: WindowReport & { roles?: string[] }): Promise<void> {
    await this.remember(report.identity, report.roles);
    this.deps.people.report(window, report, this.deps.now());
    this.deps.journal.due.wake(); // escalations that had nobody to go to
    this.deps.journal.changed();
  }

  /** The window's control connection closed: its person is no longer at this hub through it. */
  dropWindow(window: string): void {
    if (this.deps.people.drop(window)) this.deps.journal.changed();
  }
}
