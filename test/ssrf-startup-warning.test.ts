import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call } from './support/http.ts';
import { SERVICE_AUDIENCE, startIdentityProvider, type TestIdentityProvider } from './support/oidc.ts';
import { startTestServer } from './support/server.ts';

/**
 * With authentication on, the outbound URL guard off (its default, as the spec says) is worth a warning at start-up:
 * the server's log (the log buffer behind `/administration/logs`) says so, and says nothing when the guard is on.
 */

const WARNING = 'svc.security.ssrf-protection.enabled is off';

describe('start-up warning when authentication is on and the SSRF guard is off', () => {
  let idp: TestIdentityProvider;
  before(async () => {
    idp = await startIdentityProvider();
  });
  after(async () => {
    await idp?.close();
  });

  async function startupWarnings(guard: boolean): Promise<string[]> {
    const server = await startTestServer('sqlite', {
      'svc.oidc.tenant-enabled': true,
      'svc.oidc.auth-server-url': idp.issuer,
      'svc.oidc.client-id': SERVICE_AUDIENCE,
      'svc.security.ssrf-protection.enabled': guard,
    });
    try {
      const logs = await call(server.url, 'GET', '/administration/logs?level=WARN', {
        headers: { authorization: `Bearer ${await idp.token('admin')}` },
      });
      assert.equal(logs.status, 200, logs.text);
      return (logs.json as Array<{ message: string }>).map((entry) => entry.message);
    } finally {
      await server.dispose();
    }
  }

  it('warns when the guard is off', async () => {
    const warnings = await startupWarnings(false);
    assert.ok(
      warnings.some((message) => message.includes(WARNING)),
      `a start-up warning names the setting: ${warnings}`,
    );
  });

  it('stays quiet when the guard is on', async () => {
    const warnings = await startupWarnings(true);
    assert.ok(!warnings.some((message) => message.includes(WARNING)), `${warnings}`);
  });
});
