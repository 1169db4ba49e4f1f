// Types for harness.mjs (plain JS so it runs without a build step).
import type { Page } from 'playwright-core';

export interface PageContext {
  port: number;
  base: string;
  url: string;
  authority: string;
  workspace: string;
  tempDir: string;
  userDataDir: string;
  log(line: string): void;
}

export interface RunOptions {
  extensionPath: string;
  workspace?: string;
  testsPath?: string;
  userSettings?: Record<string, unknown>;
  env?: Record<string, string>;
  onPage?: (page: Page, ctx: PageContext) => Promise<void>;
  timeoutMs?: number;
  keepTemp?: boolean;
  verbose?: boolean;
  viewport?: { width: number; height: number };
  serverArgs?: string[];
  /** --extensions-dir; default a fresh folder in the run's temp dir. */
  extensionsDir?: string;
}

export interface RunResult {
  exitCode: number | null;
  timedOut: boolean;
  logs: string;
  error?: Error;
  tempDir: string;
  durations: { serverReadyMs?: number; workbenchMs?: number; suiteMs?: number; totalMs?: number };
}

export const CODE_SERVER_VERSION: string;
export function toolsDir(): string;
export function vscodeNodeBinary(): string;
export function vscodeServerAvailable(): string | null;
export function runVsCode(opts: RunOptions): Promise<RunResult>;
export function statusBarItem(page: Page, text: string | RegExp): ReturnType<Page['locator']>;
export function runCommand(page: Page, title: string): Promise<void>;
export function webviewFrame(
  page: Page,
  predicate?: (f: import('playwright-core').Frame) => Promise<boolean>,
  timeoutMs?: number,
): Promise<import('playwright-core').Frame>;
