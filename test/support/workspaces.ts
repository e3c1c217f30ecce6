import { call, type Answer } from './http.ts';
import { SERVICE_AUDIENCE, startIdentityProvider, TEST_USERS, type TestUserKey } from './oidc.ts';
import { startTestServer, type StoreType, type TestServer } from './server.ts';

/**
 * A server with authentication (a real oidc-provider issuer), access levels and workspaces on, and requests as
 * each test user (`TEST_USERS`: A and C share the group team-blue, B is in team-red).
 */
export interface WorkspaceServer {
  readonly server: TestServer;
  /** A request with the user's bearer token; `json` is sent as the body. */
  as(user: TestUserKey, method: string, path: string, json?: unknown): Promise<Answer>;
  /** The user's bearer token. */
  token(user: TestUserKey): string;
  dispose(): Promise<void>;
}

export async function startWorkspaceServer(storeType: StoreType): Promise<WorkspaceServer> {
  const idp = await startIdentityProvider();
  const tokens = new Map<TestUserKey, string>();
  for (const user of Object.keys(TEST_USERS) as TestUserKey[]) tokens.set(user, await idp.token(user));
  const server = await startTestServer(storeType, {
    'svc.oidc.tenant-enabled': true,
    'svc.oidc.auth-server-url': idp.issuer,
    'svc.oidc.client-id': SERVICE_AUDIENCE,
    'svc.authorization.enabled': true,
    'svc.workspaces.enabled': true,
  });
  const token = (user: TestUserKey) => tokens.get(user)!;
  return {
    server,
    token,
    as: (user, method, path, json) =>
      call(server.url, method, path, {
        ...(json === undefined ? {} : { json }),
        headers: { authorization: `Bearer ${token(user)}` },
      }),
    dispose: async () => {
      await server.dispose();
      await idp.close();
    },
  };
}
