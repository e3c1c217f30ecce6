import { resourceKinds } from '../resources/kinds.ts';
import { ROLE_CLASSES, type RouteAccess } from '../security/route-access.ts';
import type { DeclaredRoute } from './auth.ts';

/**
 * The README's access table, generated from the routes' own declarations (`app.declaredAccess`):
 * `npm run docs:access` rewrites it, `test/access-docs.test.ts` fails while it is stale.
 */

export const ACCESS_TABLE_START =
  '<!-- access table: generated from the routes by `npm run docs:access`; do not edit -->';
export const ACCESS_TABLE_END = '<!-- end of the access table -->';

/** Every configuration store has the same routes; the table shows them once under this name. */
const STORE = '<store>';

const cell = (text: string) => text.replaceAll('|', '\\|');

function accessKey(access: RouteAccess): string {
  return `${access.roles}\u0000${access.level ?? ''}\u0000${access.rule ?? ''}`;
}

/** Rows: one per route path and access, the methods sharing both joined, the stores' routes shown once. */
function rows(routes: readonly DeclaredRoute[]): { methods: string[]; url: string; access: RouteAccess }[] {
  const byKey = new Map<string, { methods: string[]; url: string; access: RouteAccess }>();
  const storeRoute = (url: string) => {
    const kind = resourceKinds.find((k) => url === k.storePath || url.startsWith(`${k.storePath}/`));
    return kind && STORE + url.slice(kind.storePath.length);
  };
  // A route only some stores have (a knowledge base's documents) is shown with its own path.
  const kindsPerStoreRoute = new Map<string, number>();
  for (const route of routes) {
    const shared = storeRoute(route.url);
    if (shared)
      kindsPerStoreRoute.set(
        `${route.method} ${shared}`,
        (kindsPerStoreRoute.get(`${route.method} ${shared}`) ?? 0) + 1,
      );
  }
  for (const route of routes) {
    const shared = storeRoute(route.url);
    const url =
      shared && kindsPerStoreRoute.get(`${route.method} ${shared}`) === resourceKinds.length ? shared : route.url;
    const key = `${url}\u0000${accessKey(route.access)}`;
    const row = byKey.get(key) ?? { methods: [], url, access: route.access };
    for (const method of route.method.split(', ')) if (!row.methods.includes(method)) row.methods.push(method);
    byKey.set(key, row);
  }
  return [...byKey.values()];
}

/** The two Markdown tables: role classes, then every route. */
export function accessTableMarkdown(routes: readonly DeclaredRoute[]): string {
  const classes = Object.entries(ROLE_CLASSES).map(
    ([name, roles]) =>
      `| \`${name}\` | ${roles.length > 0 ? roles.join(', ') : name === 'public' ? 'none: no token needed' : 'any valid token'} |`,
  );
  const routeRows = rows(routes).map(
    ({ methods, url, access }) =>
      `| ${methods.join(', ')} | \`${cell(url)}\` | ${access.roles} | ${access.level ?? ''} | ${cell(access.rule ?? '')} |`,
  );
  return [
    '| Role class | Roles |',
    '|---|---|',
    ...classes,
    '',
    `\`${STORE}\` stands for each configuration store: ${resourceKinds.map((kind) => `\`${kind.storePath}\``).join(', ')}.`,
    '',
    '| Method | Route | Role class | Level (enforcement on) | Also checked for non-admins (enforcement on) |',
    '|---|---|---|---|---|',
    ...routeRows,
  ].join('\n');
}

/** The README with its access table replaced by `table`; throws when the markers are missing. */
export function withAccessTable(readme: string, table: string): string {
  const start = readme.indexOf(ACCESS_TABLE_START);
  const end = readme.indexOf(ACCESS_TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`The README has no access table markers (${ACCESS_TABLE_START} ... ${ACCESS_TABLE_END}).`);
  return `${readme.slice(0, start + ACCESS_TABLE_START.length)}\n${table}\n${readme.slice(end)}`;
}
