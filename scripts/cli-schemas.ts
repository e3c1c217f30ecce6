/** Rewrites the CLI's bundled JSON Schemas (cli/schemas.json) from what a server publishes (`npm run cli:schemas`). */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLED_SCHEMAS_URL } from '../cli/validate.ts';
import { startServer } from '../src/server.ts';
import { loadSettings } from '../src/settings.ts';

/** Every kind's schema as `GET /resourcekinds` and `GET <store>/jsonSchema` publish them, by kind name. */
export async function publishedSchemas(
  baseUrl: string,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const read = async (path: string) => {
    const response = await fetch(`${baseUrl}${path}`, { headers });
    if (!response.ok) throw new Error(`GET ${path} answered ${response.status}`);
    return response.json();
  };
  const kinds = (await read('/resourcekinds')) as { name: string; storePath: string }[];
  const schemas: Record<string, unknown> = {};
  for (const kind of kinds) schemas[kind.name] = await read(`${kind.storePath}/jsonSchema`);
  return schemas;
}

if (import.meta.main) {
  const dir = await mkdtemp(join(tmpdir(), 'svc-schemas-'));
  const server = await startServer(
    loadSettings(
      {},
      {
        'svc.http.port': 0,
        'svc.http.host': '127.0.0.1',
        'svc.datastore.type': 'sqlite',
        'svc.datastore.sqlite.path': join(dir, 'svc.db'),
      },
    ),
    { logDestination: { write: () => undefined } },
  );
  try {
    await writeFile(BUNDLED_SCHEMAS_URL, `${JSON.stringify(await publishedSchemas(server.url))}\n`);
    console.log('cli/schemas.json: rewritten');
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
