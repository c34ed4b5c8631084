// Debian's Chromium for the browser tests, driven by playwright-core (it cannot download a
// browser here). CHROMIUM_PATH overrides the path. Missing: describeIf('chromium') skips the
// suite (requirements.ts).
import type { Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless, as root, and no calls to Google's services (this machine's network refuses them). */
const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium; `extraArgs` are added to the usual ones. */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  // Loaded when used: the gate reads CHROMIUM from this module in every suite, and
  // playwright-core takes long to load.
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: [...LAUNCH_ARGS, ...extraArgs], timeout: 60_000 });
}
