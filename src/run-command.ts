// The command the command line names: serve, migrate, backup, import, help or version (loaded by main.ts).
// Whatever stops the service from starting (or a backup, or an import) is one line on stderr:
// exit 1 (2 for a command-line mistake; an import that skipped invalid rows exits 3).
import { HELP, USAGE, UsageError, parseCommandLine, type Command } from './cli.js';
import { backup } from './commands/backup.js';
import { importFile } from './commands/import.js';
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
  const command = commandLine();
  const doing = command.name === 'backup' ? 'cannot back up' : command.name === 'import' ? 'cannot import' : 'cannot start';
  return run(command, dependencies).catch((error: unknown) => exitOnFailure(error, doing));
}

/** The command, or the mistake on the command line and the usage, exit 2. */
function commandLine(): Command {
  try {
    return parseCommandLine(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`book-service: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
}

async function run(command: Command, { loadFastPaths }: CommandDependencies) {
  switch (command.name) {
    case 'help':
      return void process.stdout.write(HELP);
    case 'version':
      return void process.stdout.write(`${VERSION}\n`);
    case 'migrate':
      return migrate();
    case 'backup':
      return backup(command.file);
    case 'import':
      process.exitCode = await importFile(command.file, { dryRun: command.dryRun });
      return;
    case 'serve':
      return serve(loadFastPaths);
  }
}

/** `doing`: what failed, as the one line starts ("cannot start", "cannot back up"). */
function exitOnFailure(error: unknown, doing: string): never {
  // A failure the user can fix names its setting and cause; anything else is still one line,
  // and LOG_LEVEL=debug adds its stack.
  const expected = error instanceof StartupError; // ConfigError, StoreStartupError, a listen failure
  const message = expected ? (error as Error).message : error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  process.stderr.write(`book-service: ${doing}: ${message.split('\n')[0]}\n`);
  if (!expected && error instanceof Error && /^(debug|trace)$/i.test(process.env.LOG_LEVEL ?? '')) {
    process.stderr.write(`${error.stack}\n`);
  }
  process.exit(1);
}
