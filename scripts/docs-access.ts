/** Rewrites the README's access table from the routes' declarations (`npm run docs:access`). */
import { readFile, writeFile } from 'node:fs/promises';
import { accessTableMarkdown, withAccessTable } from '../src/http/access-docs.ts';
import { withScratchServer } from './scratch-server.ts';

const readmePath = new URL('../README.md', import.meta.url);
await withScratchServer(async (server) => {
  const readme = await readFile(readmePath, 'utf8');
  const updated = withAccessTable(readme, accessTableMarkdown(server.app.declaredAccess));
  await writeFile(readmePath, updated);
  console.log(updated === readme ? 'README access table: up to date' : 'README access table: rewritten');
});
