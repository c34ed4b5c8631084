// What PostgreSQL's own settings leave of "an acknowledged write survives a crash": the service
// answers 201 once the server says COMMIT, and these settings decide what that COMMIT is worth.
// Read at startup, from the node in use; each one set otherwise is a warning (the server is the
// operator's to configure, so the service still starts).
import { sql, type QueryExecutorProvider } from 'kysely';

/** Each setting that must be `on`, and what is at stake when it is not. */
const MUST_BE_ON: Readonly<Record<string, string>> = {
  fsync: 'a crash of its host can lose or corrupt acknowledged writes',
  synchronous_commit: 'a crash of the server can lose the last acknowledged writes',
  full_page_writes: 'a crash of its host can leave pages half written',
};

export async function postgresDurabilityWarnings(db: QueryExecutorProvider, server: string): Promise<string[]> {
  const { rows } = await sql<{ name: string; setting: string }>`select name, setting from pg_settings where name in (${sql.join(Object.keys(MUST_BE_ON))})`.execute(db);
  return rows
    .filter(({ setting }) => setting === 'off')
    .map(({ name }) => `PostgreSQL at ${server} has ${name} = off: ${MUST_BE_ON[name]}; set ${name} = on (docs/operations.md "Durability")`);
}
