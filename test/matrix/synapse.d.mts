// Types for synapse.mjs (plain JS so it also runs without a build step).

export const SYNAPSE_VERSION: string;
/** The Synapse venv dir if a verified install is there, else null. */
export function synapseAvailable(): string | null;
export function synapseVenvDir(): string;
export function freePort(): Promise<number>;
export function raisedRateLimits(): Record<string, unknown>;

export interface StartedSynapse {
  url: string;
  port: number;
  serverName: string;
  stop(): Promise<void>;
  kill9(): Promise<void>;
  restart(): Promise<void>;
  registerUser(localpart: string, password: string): Promise<{ userId: string; accessToken: string; deviceId: string }>;
  logs(): string;
  /** With federation: the gate other servers reach this one through (linkGate.mjs). */
  federationLink?: { cut(): Promise<void>; restore(): Promise<void>; readonly open: boolean };
}

export function startSynapse(opts: {
  dir: string;
  port?: number;
  defaultMessageRateLimit?: boolean;
  serverName?: string;
  startTimeoutMs?: number;
  extraConfig?: Record<string, unknown>;
  venv?: string;
  /** Federate with other test homeservers on loopback (named 127.0.0.1:<federation port>). */
  federation?: boolean;
}): Promise<StartedSynapse>;
