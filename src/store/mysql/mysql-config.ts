// How DB_URL names a MySQL or MariaDB store: the hosts it lists. Read at startup without
// loading mysql2.
import type { DatabaseUrls } from '../driver.js';
import { splitHosts, type DatabaseNode } from '../nodes.js';

export interface MysqlTarget {
  kind: 'mysql';
  nodes: DatabaseNode[];
}

export const mysqlUrls: DatabaseUrls<MysqlTarget> = {
  kind: 'mysql',
  schemes: { mysql: 'mysql://…', mariadb: 'mariadb://…' },
  // mysql2 reads mysql:// only; MariaDB speaks the same protocol.
  parse: (dbUrl, { Invalid }) => ({ kind: 'mysql', nodes: splitHosts(dbUrl.replace(/^mariadb:/i, 'mysql:'), 3306, Invalid) }),
};
