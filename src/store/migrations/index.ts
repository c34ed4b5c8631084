// Versioned migrations, in order. Names sort lexically; never rename or edit a shipped one.
import type { Migration, MigrationProvider } from 'kysely';
import type { StoreDialect } from '../book-store.js';
import { createBooks } from './001-create-books.js';

export function migrationsFor(dialect: StoreDialect): MigrationProvider {
  const migrations: Record<string, Migration> = {
    '001-create-books': createBooks(dialect),
  };
  return { getMigrations: async () => migrations };
}
