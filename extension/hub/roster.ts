// Who is on this hub: names made known (addressable), live sessions attached and detached, the
// people at editor windows. A name is recorded before its session shows as live, so sending to a
// live peer always works; a session closed while that was written is never listed.
import { caseTwin, caseTwinMessage } from './bus/identity';
import { BusError } from './bus/errors';
import type { Journal } from './journal';
import type { People, WindowReport } from './people';
import type { Pushes } from './pushes';
import type { Session, SessionRegistry } from './sessions';

export interface RosterDeps {
  journal: Journal;
  sessions: SessionRegistry;
  people: People;
  pushes: Pushes;
  now: () => number;
  log: (line: string) => void;
}

export class Roster {
  /** Names being recorded right now: a case twin racing one must see it before its commit lands. */
  private readonly naming = new Set<string>();

  constructor(private readonly d: RosterDeps) {}

  /** Makes a name known (addressable) without a live session: the person at the editor. */
  async remember(identity: string, roles?: string[]): Promise<void> {
    const twin = this.caseTwin(identity);
    if (twin) throw new BusError('invalid_identity', caseTwinMessage(identity, twin));
    const known = this.d.journal.state.identities[identity];
    const sameRoles = !roles || (known && known.roles.join() === roles.join());
    if (known && sameRoles && this.d.now() - known.lastSeen < 60_000) return;
    this.naming.add(identity);
    try {
      await this.d.journal.commit([{ type: 'identity', name: identity, at: this.d.now(), roles: roles ?? known?.roles ?? [] }]);
    } finally {
      this.naming.delete(identity);
    }
  }

  /** A known identity `name` would be mistaken for (same letters, other case). */
  caseTwin(name: string): string | undefined {
    const identities = this.d.journal.state.identities;
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
    const known = this.d.journal.state.identities[session.identity];
    if (!known || (session.roles.length > 0 && known.roles.join() !== session.roles.join())) {
      try {
        await this.remember(session.identity, session.roles);
      } catch (e) {
        this.d.log(`could not record identity ${session.identity}: ${(e as Error).message}`);
      }
    }
    if (!session.isOpen()) return; // closed while we were writing: never list a dead peer
    this.d.sessions.add(session);
    this.d.log(`session ${session.key} attached as ${session.identity} (${session.client})`);
    this.d.journal.changed();
    await this.d.pushes.replay(session);
  }

  detach(session: Session): void {
    if (!this.d.sessions.remove(session)) return;
    this.d.log(`session ${session.key} (${session.identity}) detached`);
    // "Last seen" is when its last session left, not when it first connected.
    this.d.journal.commit([{ type: 'identity', name: session.identity, at: this.d.now(), roles: session.roles }])
      .catch((e) => this.d.log(`could not record when ${session.identity} left: ${(e as Error).message}`));
    this.d.journal.changed();
  }

  /** An editor window says who sits at it and whether it has focus; the name becomes addressable. */
  async reportWindow(window: string, report: WindowReport & { roles?: string[] }): Promise<void> {
    await this.remember(report.identity, report.roles);
    this.d.people.report(window, report, this.d.now());
    this.d.journal.due.wake(); // escalations that had nobody to go to
    this.d.journal.changed();
  }

  /** The window's control connection closed: its person is no longer at this hub through it. */
  dropWindow(window: string): void {
    if (this.d.people.drop(window)) this.d.journal.changed();
  }
}
