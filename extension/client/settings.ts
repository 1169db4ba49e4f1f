// The user's Handoff settings, read fresh each time so changes apply without a reload.
import { osPersonName } from '../shared/personName';
import { WAKE_MODES, type WakeMode } from '../protocol/wake';
import * as vscode from 'vscode';

/** The identity the person at the editor sends as: the setting, else the OS user name. */
export function humanIdentity(): string {
  const configured = vscode.workspace.getConfiguration('handoff').get<string>('identity', '').trim();
  return configured || osPersonName();
}

/** Roles the person holds: handoffs to `role:NAME` reach them too. */
export function humanRoles(): string[] {
  return vscode.workspace
    .getConfiguration('handoff')
    .get<string[]>('roles', [])
    .filter((r) => /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(r));
}

/** Whom this person's unanswered handoffs escalate to; undefined: the person themself. */
export function escalateTo(): string | undefined {
  return vscode.workspace.getConfiguration('handoff').get<string>('escalateTo', '').trim() || undefined;
}

export function wakeIdleAgents(): WakeMode {
  const mode = vscode.workspace.getConfiguration('handoff').get<string>('wakeIdleAgents', 'on');
  return WAKE_MODES.find((m) => m === mode) ?? 'on';
}

export function defaultSlaSeconds(): number {
  return vscode.workspace.getConfiguration('handoff').get<number>('defaultSlaSeconds', 600);
}
