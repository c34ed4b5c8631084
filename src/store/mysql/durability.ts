// What MySQL's or MariaDB's own settings leave of "an acknowledged write survives a crash": the
// service answers 201 once the server says COMMIT, and InnoDB writes its log to disk at each
// commit only with innodb_flush_log_at_trx_commit = 1. On a Galera cluster too: replication
// alone does not keep a transaction when nodes crash in quick succession (Jepsen's 2026
// analysis of MariaDB Galera Cluster lost committed transactions that way). Read at startup,
// from the node in use; set otherwise, it is a warning (the service still starts).
import { sql, type QueryExecutorProvider } from 'kysely';

export async function mysqlDurabilityWarnings(db: QueryExecutorProvider, server: string): Promise<string[]> {
  const { rows } = await sql<{ Variable_name: string; Value: string }>`show variables where Variable_name in ('innodb_flush_log_at_trx_commit', 'wsrep_on')`.execute(db);
  const value = (name: string) => rows.find((row) => row.Variable_name === name)?.Value;
  const flush = value('innodb_flush_log_at_trx_commit');
  if (flush === undefined || flush === '1') return [];
  const galera = value('wsrep_on') === 'ON' ? ', on every node of a Galera cluster too (nodes crashing in quick succession lose committed transactions)' : '';
  return [
    `MySQL at ${server} has innodb_flush_log_at_trx_commit = ${flush}: a crash of its host can lose the last acknowledged writes; set it to 1${galera} (docs/operations.md "Durability")`,
  ];
}
