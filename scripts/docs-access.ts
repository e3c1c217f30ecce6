/** Rewrites the README's access table from the routes' declarations (`npm run docs:access`). */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accessTableMarkdown, withAccessTable } from '../src/http/access-docs.ts';
import { startServer } from '../src/server.ts';
import { loadSettings } from '../src/settings.ts';

const readmePath = new URL('../README.md', import.meta.url);
const dir = await mkdtemp(join(tmpdir(), 'svc-docs-'));
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
  const readme = await readFile(readmePath, 'utf8');
  const updated = withAccessTable(readme, accessTableMarkdown(server.app.declaredAccess));
  await writeFile(readmePath, updated);
  console.log(updated === readme ? 'README access table: up to date' : 'README access table: rewritten');
} finally {
  await server.close();
  await rm(dir, { recursive: true, force: true });
}
