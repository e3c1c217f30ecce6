import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Throw-away PostgreSQL databases for tests. The server is reached through `SVC_TEST_POSTGRES_URL`
 * (an admin connection URL, default `postgres://postgres@127.0.0.1:5432/postgres`, trust auth).
 */
export const adminUrl = process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Creates `svc_test_<random>`; `drop()` removes it even while connections are still open. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

async function withAdmin<T>(body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}
