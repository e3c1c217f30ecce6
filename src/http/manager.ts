import { existsSync, statSync } from 'node:fs';
import { join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../settings.ts';
import { problem, sendProblem } from './problems.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * The web manager (a single-page application built by Vite into `web/dist`, see `web/`), served at `/`.
 *
 * Files of the build are served as they are (hashed assets cached for a year). `/` and any path under
 * `/manager/` without a file extension answer `index.html`, so a deep link such as `/manager/agents/<id>` survives
 * a reload; the application's own router then shows the screen. Every other path no route serves (an API path
 * such as `/agentstore/nothing`, a missing file such as `/favicon.ico`) keeps the service's 404 problem.
 *
 * `GET /manager/config.json` tells the manager how to sign in: `{authEnabled, issuer, clientId}` (issuer:
 * `svc.oidc.public-url`, the identity provider's address as browsers reach it, else `svc.oidc.auth-server-url`;
 * client id: `svc.oidc.client-id`, a public client of the provider, which is also the audience the service checks).
 * It is answered by the same catch-all route, so it is public like the shell (its `GET /*` route):
 * the manager reads it before anyone has signed in. It names no secret (the manager is a public client).
 */

export const DEFAULT_MANAGER_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url));

/** The first path segment of the manager's own screens (its router's base); other paths are never the shell. */
const MANAGER_SEGMENT = 'manager';

export interface ManagerOptions {
  /** The built manager (default: `web/dist` of this checkout). */
  readonly dir?: string;
  /** The service's settings (sign-in configuration); without them the manager is told authentication is off. */
  readonly settings?: Settings;
}

export const MANAGER_CONFIG_PATH = '/manager/config.json';

/** What the manager needs to sign in (nothing secret). */
export interface ManagerConfig {
  readonly authEnabled: boolean;
  readonly issuer: string | null;
  readonly clientId: string | null;
}

export function managerConfig(settings: Settings | undefined): ManagerConfig {
  if (!settings?.['svc.oidc.tenant-enabled']) return { authEnabled: false, issuer: null, clientId: null };
  const issuer = settings['svc.oidc.public-url'] || settings['svc.oidc.auth-server-url'] || null;
  return {
    authEnabled: true,
    issuer: issuer ? issuer.replace(/\/+$/, '') : null,
    clientId: settings['svc.oidc.client-id'] || null,
  };
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export async function managerRoutes(app: TypedApp, options: ManagerOptions): Promise<void> {
  const root = normalize(options.dir ?? DEFAULT_MANAGER_DIR);
  const built = existsSync(join(root, 'index.html'));
  if (built) await app.register(fastifyStatic, { root, serve: false, decorateReply: true });
  else app.log.warn({ dir: root }, 'the web manager is not built (npm run build:web); / answers 503');

  const config = managerConfig(options.settings);

  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    const pathname = decodeURIComponent((request.url.split('?')[0] ?? '/').replace(/\/{2,}/g, '/'));
    if (pathname === MANAGER_CONFIG_PATH) return reply.header('cache-control', 'no-store').send(config);
    const segments = pathname.split('/').filter(Boolean);
    const last = segments[segments.length - 1] ?? '';
    const hasExtension = /\.[A-Za-z0-9]+$/.test(last);
    if (!hasExtension && segments.length > 0 && segments[0] !== MANAGER_SEGMENT) return reply.callNotFound();

    if (!built) {
      if (hasExtension) return reply.callNotFound();
      return sendProblem(
        reply,
        problem(503, 'The web manager is not built. Run `npm run build:web` (npm start does it first).'),
      );
    }
    if (hasExtension) {
      const relative = normalize(segments.join('/'));
      if (relative.startsWith('..') || relative.includes(`${sep}..`) || !isFile(join(root, relative)))
        return reply.callNotFound();
      const immutable = relative.startsWith(`assets${sep}`);
      return reply.sendFile(relative, { cacheControl: true, maxAge: immutable ? 31_536_000_000 : 0, immutable });
    }
    // The application shell: never cached, so a new build is picked up at once.
    return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
  };

  app.get('/', { config: { access: { roles: 'public' } }, schema: { hide: true } }, serve);
  app.get('/*', { config: { access: { roles: 'public' } }, schema: { hide: true } }, serve);
}
