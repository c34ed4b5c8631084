// Debian's Chromium for the browser tests, driven by playwright-core (it cannot download a
// browser here). CHROMIUM_PATH overrides the path. Missing: the suite is skipped with a
// visible warning, except under CI=true, where it fails.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { describeWhenAvailable } from '../ci.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

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

export function describeWithChromium(title: string, suite: () => void) {
  const missing = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`;
  describeWhenAvailable(title, missing, suite);
}

/** A headless Chromium; `extraArgs` are added to the usual ones. */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...LAUNCH_ARGS, ...extraArgs], timeout: 60_000 });
}
