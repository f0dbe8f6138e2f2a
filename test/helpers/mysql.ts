import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';

/**
 * A MariaDB/MySQL database of its own for one test file, under the server at TEST_MYSQL_URL
 * (e.g. mysql://root@localhost/?socketPath=/run/mysqld/mysqld.sock); dropped again by `drop()`.
 */
export interface TestMysqlDatabase {
  /** the URL of the new database, for the importer */
  url: string;
  query(sql: string, values?: unknown[]): Promise<unknown>;
  drop(): Promise<void>;
}

export async function createMysqlDatabase(serverUrl: string): Promise<TestMysqlDatabase> {
  const name = `ferry_test_${randomBytes(6).toString('hex')}`;
  const admin = await mysql.createConnection({ uri: serverUrl });
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await mysql.createConnection({ uri: url.toString(), multipleStatements: false });
  return {
    url: url.toString(),
    query: async (sql, values) => (await db.query(sql, values))[0],
    drop: async () => {
      await db.end();
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
    },
  };
}
