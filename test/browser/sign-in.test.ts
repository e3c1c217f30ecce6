import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page, Request } from 'playwright-core';
import { createAgent, welcomeOutputs } from '../support/agents.ts';
import { WIDE, launchBrowser, screenshots, watchConsole } from '../support/browser.ts';
import { call } from '../support/http.ts';
import { SERVICE_AUDIENCE, startIdentityProvider, type TestIdentityProvider } from '../support/oidc.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Signing in to the web manager with authentication on, in Debian's Chromium against the real server and a real
 * identity provider (oidc-provider on loopback, its development login form): the authorization code flow with
 * PKCE as a public client, tokens in memory only, the access token on every call and refreshed before it expires
 * (access tokens live 10 seconds here, and the service allows 1 second of clock skew), sign-out at the provider, and role-dependent views (an admin deploys and
 * deletes, a viewer only reads). Screenshots go to test/browser/artifacts/.
 */

const ACCESS_TOKEN_TTL = 10;
const CLOCK_TOLERANCE = 1;

const claimsOf = (token: string): { exp: number; preferred_username?: string } =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));

describe('signing in to the web manager', { timeout: 180_000 }, () => {
  let idp: TestIdentityProvider;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let consoleErrors: { take(): string[] };
  let tokenEndpoint = '';
  let agentId = '';
  /** Token endpoint calls (their grant types) and the bearer tokens of API calls, as the browser sent them. */
  const grants: string[] = [];
  const authorizeRequests: URL[] = [];
  const apiTokens: string[] = [];

  const url = (path: string) => `${server.url}${path}`;
  const main = () => page.getByRole('main');
  /** No console errors on the manager's pages (the provider's own pages ask for web fonts the closed network refuses). */
  const assertNoConsoleErrors = () => {
    const errors = consoleErrors.take().filter((e) => e.includes(`(${server.url}`) || e.startsWith('page error'));
    assert.deepEqual(errors, [], `console errors:\n${errors.join('\n')}`);
  };
  const signInAtProvider = async (login: string) => {
    await page.waitForURL(`${idp.issuer}/interaction/**`);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any password will do');
    await page.getByRole('button', { name: 'Sign-in' }).click();
  };

  before(async () => {
    idp = await startIdentityProvider({ interactive: true, accessTokenTTL: ACCESS_TOKEN_TTL });
    server = await startTestServer('sqlite', {
      'svc.oidc.tenant-enabled': true,
      'svc.oidc.auth-server-url': idp.issuer,
      'svc.oidc.client-id': SERVICE_AUDIENCE,
      'svc.oidc.clock-tolerance-seconds': CLOCK_TOLERANCE,
      'svc.vault.master-key': 'a-master-key-for-the-sign-in-test',
    });
    await idp.registerManager(server.url);
    tokenEndpoint = (
      (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as { token_endpoint: string }
    ).token_endpoint;

    const adminToken = await idp.token('admin');
    const as = (method: string) => (path: string, options?: { json?: unknown }) =>
      call(server.url, method, path, { ...options, headers: { authorization: `Bearer ${adminToken}` } });
    agentId = await createAgent(
      { get: as('GET'), post: as('POST'), put: as('PUT'), patch: as('PATCH'), delete: as('DELETE') },
      { outputSet: welcomeOutputs },
    );
    await as('PATCH')(`/descriptorstore/descriptors/${agentId}?version=1`, {
      json: { operation: 'SET', document: { name: 'Greeter', description: 'Says welcome.' } },
    });

    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: WIDE });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    consoleErrors = watchConsole(page);
    page.on('request', (request: Request) => {
      if (request.url() === tokenEndpoint && request.method() === 'POST')
        grants.push(new URLSearchParams(request.postData() ?? '').get('grant_type') ?? '');
      if (request.url().startsWith(`${idp.issuer}/auth`)) authorizeRequests.push(new URL(request.url()));
      const authorization = request.headers().authorization;
      if (request.url().startsWith(server.url) && authorization?.startsWith('Bearer '))
        apiTokens.push(authorization.slice('Bearer '.length));
    });
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    await idp?.close();
  });

  it('tells the manager how to sign in, anonymously; the API itself still needs a token', async () => {
    const config = await call(server.url, 'GET', '/manager/config.json');
    assert.equal(config.status, 200, config.text);
    assert.deepEqual(config.json, { authEnabled: true, issuer: idp.issuer, clientId: SERVICE_AUDIENCE });
    assert.equal((await call(server.url, 'GET', '/agentstore/agents/descriptors')).status, 401);
  });

  it('an admin is sent to the identity provider, signs in there and lands where they were going, with deploy and delete', async () => {
    await page.goto(url(`/manager/agents/${agentId}`));
    await signInAtProvider('ada-admin');
    await page.waitForURL(url(`/manager/agents/${agentId}`));
    await main().getByRole('heading', { name: 'Greeter', level: 1 }).waitFor();
    await page.getByTestId('signed-in-user').getByText('ada-admin').waitFor();

    // The authorization request: code flow, PKCE S256, state and nonce; the code was exchanged with the verifier.
    const authorize = authorizeRequests[0]!;
    assert.equal(authorize.searchParams.get('response_type'), 'code');
    assert.equal(authorize.searchParams.get('client_id'), SERVICE_AUDIENCE);
    assert.equal(authorize.searchParams.get('redirect_uri'), url('/manager/callback'));
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    assert.match(authorize.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.ok((authorize.searchParams.get('state') ?? '').length >= 32);
    assert.ok((authorize.searchParams.get('nonce') ?? '').length >= 32);
    assert.deepEqual(grants, ['authorization_code']);

    // Calls carry the access token; nothing of it is kept in the browser's storage.
    assert.ok(apiTokens.length > 0, 'API calls carry a bearer token');
    const token = apiTokens[apiTokens.length - 1]!;
    assert.equal(claimsOf(token).preferred_username, 'ada-admin');
    const stored = await page.evaluate<string>(
      'JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }) + document.cookie',
    );
    assert.ok(!stored.includes(token.split('.')[2]!), 'the access token is not stored');
    assert.equal(stored, '{}{}', 'nothing is left in storage after the redirect');

    await main().getByRole('button', { name: 'Delete' }).waitFor();
    await main().getByRole('button', { name: 'Export' }).waitFor();
    await main().getByRole('button', { name: 'Deploy to production' }).click();
    await main().getByTestId('status-production').getByText('READY').waitFor();
    await main().getByRole('button', { name: 'Undeploy from production' }).waitFor();
    for (const link of ['Secrets', 'Logs', 'Import / Export'])
      await page.getByRole('navigation').getByRole('link', { name: link }).waitFor();
    await screenshots(page, 'sign-in-01-admin-agent');
    assertNoConsoleErrors();
  });

  it('streams the log with the token (admin only)', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Logs' }).click();
    await main()
      .getByText(/Stream: live/)
      .waitFor();
    assertNoConsoleErrors();
  });

  it('refreshes the access token before it expires, so calls after the first token expired still succeed', async () => {
    const first = apiTokens.find((t) => claimsOf(t).preferred_username === 'ada-admin')!;
    const firstExpiry = claimsOf(first).exp * 1000;
    // The refresh happens on its own, before the first token expires.
    if (!grants.includes('refresh_token')) {
      await page.waitForRequest(
        (r) => r.url() === tokenEndpoint && /grant_type=refresh_token/.test(r.postData() ?? ''),
        { timeout: ACCESS_TOKEN_TTL * 1000 },
      );
    }
    assert.ok(Date.now() < firstExpiry, 'refreshed before expiry');
    // Wait until the first token is refused by the service (expired, beyond its clock tolerance).
    await page.waitForTimeout(Math.max(0, firstExpiry + (CLOCK_TOLERANCE + 1) * 1000 - Date.now()));
    assert.equal(
      (
        await call(server.url, 'GET', '/agentstore/agents/descriptors', {
          headers: { authorization: `Bearer ${first}` },
        })
      ).status,
      401,
    );

    const seen = apiTokens.length;
    await page.getByRole('navigation').getByRole('link', { name: 'Agents', exact: true }).click();
    await main().getByRole('link', { name: 'Greeter' }).waitFor();
    const later = apiTokens.slice(seen);
    assert.ok(later.length > 0);
    assert.ok(
      later.every((t) => t !== first),
      'calls use the new token',
    );
    assert.equal(claimsOf(later[0]!).preferred_username, 'ada-admin');
    assert.ok(claimsOf(later[0]!).exp * 1000 > firstExpiry);
    assert.ok(grants.filter((g) => g === 'refresh_token').length >= 1);
    assert.equal(grants.filter((g) => g === 'authorization_code').length, 1, 'no second sign-in');
    await page.getByTestId('signed-in-user').getByText('ada-admin').waitFor();
    assertNoConsoleErrors();
  });

  it('signs out at the identity provider', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${idp.issuer}/**`);
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(url('/manager/signed-out'));
    await main().getByRole('heading', { name: 'Signed out', level: 1 }).waitFor();
    assert.equal(await page.getByTestId('signed-in-user').count(), 0);
    await screenshots(page, 'sign-in-02-signed-out');
    assertNoConsoleErrors();
  });

  it('a viewer signs in and sees everything read-only: no create, edit, deploy, delete or chat', async () => {
    await main().getByRole('button', { name: 'Sign in' }).click();
    await signInAtProvider('vera-viewer');
    await page.waitForURL(url('/manager'));
    await page.getByTestId('signed-in-user').getByText('vera-viewer').waitFor();
    await main().getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await main().getByRole('link', { name: 'Greeter' }).waitFor();
    assert.equal(await main().getByRole('link', { name: 'Build an agent' }).count(), 0);
    const nav = page.getByRole('navigation');
    for (const link of ['Secrets', 'Logs', 'Import / Export'])
      assert.equal(await nav.getByRole('link', { name: link }).count(), 0, link);
    await screenshots(page, 'sign-in-03-viewer-dashboard');

    await nav.getByRole('link', { name: 'Agents', exact: true }).click();
    await main().getByRole('link', { name: 'Greeter' }).waitFor();
    assert.equal(await main().getByRole('link', { name: 'New agent' }).count(), 0);

    await main().getByRole('link', { name: 'Greeter' }).click();
    await main().getByRole('heading', { name: 'Greeter', level: 1 }).waitFor();
    await main().getByTestId('status-production').getByText('READY').waitFor();
    await main().getByRole('link', { name: 'View JSON' }).waitFor();
    for (const name of [/^Deploy/, /^Undeploy/, 'Delete', 'Export'])
      assert.equal(await main().getByRole('button', { name }).count(), 0, String(name));
    for (const name of ['Edit', 'Chat'])
      assert.equal(await main().getByRole('link', { name, exact: true }).count(), 0, name);
    await screenshots(page, 'sign-in-04-viewer-agent');

    await main().getByRole('link', { name: 'View JSON' }).click();
    await main()
      .getByText(/^Read only/)
      .waitFor();
    await main().locator('.cm-content[contenteditable="false"]').waitFor();
    for (const name of ['Save as new version', 'Duplicate', 'Delete', 'Save name and description'])
      assert.equal(await main().getByRole('button', { name }).count(), 0, name);

    await nav.getByRole('link', { name: 'Chat', exact: true }).click();
    await main()
      .getByText(/Your role reads conversations but does not chat/)
      .waitFor();
    assert.equal(await main().getByRole('button', { name: 'Start conversation' }).count(), 0);

    await nav.getByRole('link', { name: 'Triggers' }).click();
    await main().getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    await main().getByText('No triggers.').waitFor();
    assert.equal(await main().getByRole('button', { name: 'Create trigger' }).count(), 0);
    await screenshots(page, 'sign-in-05-viewer-chat-triggers');
    assertNoConsoleErrors();
  });
});
