// The command the command line names: serve, migrate, help or version (loaded by main.ts).
// Whatever stops the service from starting is one line on stderr: exit 1 (2 for a
// command-line mistake).
import { HELP, USAGE, UsageError, parseCommandLine, type Command } from './cli.js';
import { migrate } from './commands/migrate.js';
import { serve } from './commands/serve.js';
import type { LoadFastPaths } from './seams.js';
import { StartupError } from './startup-error.js';
import { VERSION } from './version.js';

export interface CommandDependencies {
  /** The speed paths' loader (src/main.ts); without one, the service is the plain one. */
  loadFastPaths?: LoadFastPaths;
}

/** Runs the command the command line names; never rejects (a failure exits the process). */
export function runCommand(dependencies: CommandDependencies = {}): Promise<void> {
  return run(dependencies).catch(exitOnFailure);
}

async function run({ loadFastPaths }: CommandDependencies) {
  let command: Command;
  try {
    command = parseCommandLine(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`book-service: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  switch (command) {
    case 'help':
      return void process.stdout.write(HELP);
    case 'version':
      return void process.stdout.write(`${VERSION}\n`);
    case 'migrate':
      return migrate();
    case 'serve':
      return serve(loadFastPaths);
  }
}

function exitOnFailure(error: unknown): never {
  // A failure the user can fix names its setting and cause; anything else is still one line,
  // and LOG_LEVEL=debug adds its stack.
  const expected = error instanceof StartupError; // ConfigError, StoreStartupError, a listen failure
  const message = expected ? (error as Error).message : error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  process.stderr.write(`book-service: cannot start: ${message.split('\n')[0]}\n`);
  if (!expected && error instanceof Error && /^(debug|trace)$/i.test(process.env.LOG_LEVEL ?? '')) {
    process.stderr.write(`${error.stack}\n`);
  }
  process.exit(1);
}
