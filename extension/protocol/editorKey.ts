// The editor key: a random secret the window that starts a hub hands it, which only editor windows
// of the same user's VS Code hold (SecretStorage). A socket control connection that presents it is
// an editor window, not the CLI (docs/threat-model.md, "Who may speak for whom").

/**
 * How the window hands the key to the hub: in its environment (readable only by the same user),
 * never on its command line (/proc/PID/cmdline is world-readable) nor in the LSP `initialize`
 * (the languageclient's verbose trace would log it).
 */
export const EDITOR_KEY_ENV = 'HANDOFF_EDITOR_KEY';

/** 32 random bytes, hex. */
export const EDITOR_KEY_PATTERN = /^[0-9a-f]{64}$/;
