// Versioned migrations, in order. Names sort lexically; never rename or edit a shipped one.
import type { Migration, MigrationProvider } from 'kysely';
import type { BooksTableDdl } from '../driver.js';
import { createBooks } from './001-create-books.js';
import { addBookVersions } from './002-book-versions.js';
import { createIdempotencyKeys } from './003-idempotency-keys.js';
import { addListIndexes } from './004-list-indexes.js';
import { createBookChanges } from './005-book-changes.js';
import { widenStoredAnswers } from './006-large-stored-answers.js';

/** Each migration by name, given what the store's database module says about the books table. */
const MIGRATIONS: Record<string, (booksTable: BooksTableDdl) => Migration> = {
  '001-create-books': createBooks,
  '002-book-versions': addBookVersions,
  '003-idempotency-keys': createIdempotencyKeys,
  '004-list-indexes': addListIndexes,
  '005-book-changes': createBookChanges,
  '006-large-stored-answers': widenStoredAnswers,
};

export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS);

export function migrationsFor(booksTable: BooksTableDdl): MigrationProvider {
  const migrations = Object.fromEntries(Object.entries(MIGRATIONS).map(([name, migration]) => [name, migration(booksTable)]));
  return { getMigrations: async () => migrations };
}
