/** Rewrites the CLI's bundled JSON Schemas (cli/schemas.json) from what a server publishes (`npm run cli:schemas`). */
import { writeFile } from 'node:fs/promises';
import { BUNDLED_SCHEMAS_URL } from '../cli/validate.ts';
import { withScratchServer } from './scratch-server.ts';

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
  await withScratchServer(async (server) => {
    await writeFile(BUNDLED_SCHEMAS_URL, `${JSON.stringify(await publishedSchemas(server.url))}\n`);
    console.log('cli/schemas.json: rewritten');
  });
}
