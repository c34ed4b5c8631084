// Suites that need something the machine may lack (a database server, Chromium, PostgreSQL's
// binaries): skipped with a visible warning on a developer's machine, a failure under CI=true.
import { describe, it } from 'vitest';

export const IS_CI = process.env.CI === 'true' || process.env.CI === '1';

/**
 * `describe(title, suite)` when `missing` is undefined. Otherwise the suite is skipped with a
 * warning saying what is missing, except under CI, where one failing test says it instead.
 */
export function describeWhenAvailable(title: string, missing: string | undefined, suite: () => void) {
  if (missing === undefined) {
    describe(title, suite);
  } else if (IS_CI) {
    describe(title, () => {
      it(`needs ${missing}`, () => {
        throw new Error(`required under CI: ${missing}`);
      });
    });
  } else {
    console.warn(`\n⚠ SKIPPING "${title}": ${missing}\n`);
    // Skipped only outside CI, and loudly: the machine lacks what the suite needs.
    describe.skip(title, suite);
  }
}
