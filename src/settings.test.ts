import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, test } from 'node:test';
import {
  environmentName,
  loadSettings,
  otlpTracesUrl,
  parsePropertiesFile,
  settingDefinitions,
  SettingsError,
} from './settings.ts';

const noFile = {};

test('every setting has a default, an environment form and a description', () => {
  const settings = loadSettings({}, {});
  assert.equal(settings['svc.http.port'], 7070);
  assert.equal(settings['svc.http.host'], '0.0.0.0');
  assert.equal(settings['svc.datastore.type'], 'sqlite');
  assert.equal(settings['svc.datastore.sqlite.path'], './data/svc.db');
  assert.equal(settings['svc.vault.master-key'], undefined);
  assert.equal(settings['svc.conversations.redo-cache-size'], 20);
  assert.equal(settings['svc.usermemories.deleteOlderThanDays'], -1);
  for (const [name, definition] of Object.entries(settingDefinitions)) {
    assert.match(name, /^svc\./);
    assert.ok(definition.description.length > 5, name);
  }
  assert.equal(environmentName('svc.security.ssrf-protection.enabled'), 'SVC_SECURITY_SSRF_PROTECTION_ENABLED');
  assert.equal(environmentName('svc.usermemories.deleteOlderThanDays'), 'SVC_USERMEMORIES_DELETEOLDERTHANDAYS');
});

test('the environment sets values by their environment form; unknown variables are ignored', () => {
  const settings = loadSettings(
    { SVC_HTTP_PORT: '8081', SVC_DATASTORE_TYPE: 'postgres', SVC_OIDC_TENANT_ENABLED: 'TRUE', SVC_NO_SUCH_THING: 'x' },
    {},
  );
  assert.equal(settings['svc.http.port'], 8081);
  assert.equal(settings['svc.datastore.type'], 'postgres');
  assert.equal(settings['svc.oidc.tenant-enabled'], true);
});

test('a malformed value stops start-up with a message naming the setting', () => {
  assert.throws(
    () => loadSettings({ ...noFile, SVC_HTTP_PORT: 'abc' }),
    (error: unknown) => {
      assert.ok(error instanceof SettingsError);
      assert.match(error.message, /svc\.http\.port/);
      assert.match(error.message, /SVC_HTTP_PORT/);
      assert.match(error.message, /"abc"/);
      return true;
    },
  );
  assert.throws(() => loadSettings({ ...noFile, SVC_HTTP_PORT: '70000' }), /svc\.http\.port/);
  assert.throws(
    () => loadSettings({ ...noFile, SVC_DATASTORE_TYPE: 'mongodb' }),
    /svc\.datastore\.type.*one of sqlite, postgres/,
  );
  assert.throws(() => loadSettings({ ...noFile, SVC_AUTHORIZATION_ENABLED: 'yes' }), /svc\.authorization\.enabled/);
  assert.throws(() => loadSettings({ ...noFile, SVC_CONVERSATIONS_REDO_CACHE_SIZE: '-3' }), /redo-cache-size/);
});

test('the settings file sets values; the environment wins over it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-settings-'));
  const file = join(dir, 'svc.properties');
  await writeFile(
    file,
    '# comment\nsvc.http.port = 9090\nsvc.log.level=debug\n! another comment\nsvc.datastore.sqlite.path: /tmp/x.db\n',
  );
  const fromFile = loadSettings({ SVC_CONFIG_FILE: file });
  assert.equal(fromFile['svc.http.port'], 9090);
  assert.equal(fromFile['svc.log.level'], 'debug');
  assert.equal(fromFile['svc.datastore.sqlite.path'], '/tmp/x.db');
  const envWins = loadSettings({ SVC_CONFIG_FILE: file, SVC_HTTP_PORT: '9191' });
  assert.equal(envWins['svc.http.port'], 9191);

  await writeFile(file, 'svc.http.prot=1\n');
  assert.throws(() => loadSettings({ SVC_CONFIG_FILE: file }), /svc\.http\.prot/);
  await writeFile(file, 'svc.http.port=eighty\n');
  assert.throws(() => loadSettings({ SVC_CONFIG_FILE: file }), /svc\.http\.port \(settings file\)/);
  assert.throws(
    () => loadSettings({ SVC_CONFIG_FILE: join(dir, 'missing.properties') }),
    /cannot read the settings file/,
  );
});

test('properties files: separators, blanks and comments', () => {
  const entries = parsePropertiesFile('a=1\n  b : two words \n\n#c=3\nd=x=y\n');
  assert.deepEqual(
    [...entries],
    [
      ['a', '1'],
      ['b', 'two words'],
      ['d', 'x=y'],
    ],
  );
});

describe('the OTLP traces endpoint', () => {
  it('is off without the setting and the standard variables', () => {
    assert.equal(otlpTracesUrl(undefined, {}), undefined);
    assert.equal(otlpTracesUrl('  ', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }), undefined);
  });

  it('takes the setting first, then the traces variable, then the base variable with /v1/traces', () => {
    const env = {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
    };
    assert.equal(otlpTracesUrl('http://setting:4318/v1/traces', env), 'http://setting:4318/v1/traces');
    assert.equal(otlpTracesUrl(undefined, env), 'http://traces:4318/custom');
    assert.equal(
      otlpTracesUrl(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }),
      'http://collector:4318/v1/traces',
    );
  });
});
