import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AppError } from '../errors.ts';
import { openSqliteStorage, type SqliteStorage } from '../storage/sqlite/sqlite-storage.ts';
import { MissingSecretError } from './secret-references.ts';
import { openVault, VaultKeyMismatchError } from './vault.ts';

const MASTER_KEY = 'a master key for the vault unit tests';
const VALUE = 'sk-unit-test-value-0123456789';

describe('vault', () => {
  let dir: string;
  let storage: SqliteStorage;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-vault-'));
    storage = await openSqliteStorage(join(dir, 'store.db'));
  });
  after(async () => {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('put stores only sealed bytes; the resolver returns the value and reports it for redaction', async () => {
    const vault = await openVault(storage.secrets, MASTER_KEY);
    const { created, metadata } = await vault.put({ name: 'openai-key', value: VALUE, description: 'OpenAI' });
    assert.equal(created, true);
    assert.deepEqual(
      { ...metadata, createdAt: 0, lastModifiedAt: 0 },
      { tenant: 'default', name: 'openai-key', description: 'OpenAI', createdAt: 0, lastModifiedAt: 0 },
    );

    const stored = storage.db.prepare('SELECT * FROM vault_secrets').all();
    const dump = JSON.stringify([
      stored,
      storage.db.prepare('SELECT * FROM vault_data_keys').all(),
      storage.db.prepare('SELECT * FROM vault_meta').all(),
    ]);
    assert.ok(
      !dump.includes(VALUE) && !dump.includes(Buffer.from(VALUE).toString('base64')),
      'no plaintext in the store',
    );

    const resolved = await vault.resolver().resolve('Bearer ${vault:openai-key} and ${vault:default/openai-key}');
    assert.equal(resolved.text, `Bearer ${VALUE} and ${VALUE}`);
    assert.deepEqual(resolved.secretValues, [VALUE]);
    assert.deepEqual(await vault.resolver().resolve('no references'), { text: 'no references', secretValues: [] });
  });

  test('a replacement keeps createdAt and, when none is given, the description; it is visible to the resolver at once', async () => {
    let now = 1_000;
    const vault = await openVault(storage.secrets, MASTER_KEY, { clock: () => now });
    await vault.put({ name: 'rotated', value: 'first-value', description: 'kept' });
    assert.equal((await vault.resolver().resolve('${vault:rotated}')).text, 'first-value');
    now = 2_000;
    const replaced = await vault.put({ name: 'rotated', value: 'second-value' });
    assert.equal(replaced.created, false);
    assert.deepEqual(replaced.metadata, {
      tenant: 'default',
      name: 'rotated',
      description: 'kept',
      createdAt: 1_000,
      lastModifiedAt: 2_000,
    });
    assert.equal(
      (await vault.resolver().resolve('${vault:rotated}')).text,
      'second-value',
      'the cache was invalidated',
    );
    assert.equal(await vault.remove('rotated'), true);
    assert.equal(await vault.remove('rotated'), false);
    await assert.rejects(vault.resolver().resolve('${vault:rotated}'), /Secret 'rotated' is not in the vault/);
  });

  test('decrypted values are cached for the TTL only', async () => {
    let now = 1_000;
    const vault = await openVault(storage.secrets, MASTER_KEY, { clock: () => now, cacheTtlMs: 60_000 });
    await vault.put({ name: 'cached', value: 'cached-value' });
    assert.equal((await vault.resolver().resolve('${vault:cached}')).text, 'cached-value');
    // Changed behind this vault's back (as another instance would): the cached value is served until it expires.
    const other = await openVault(storage.secrets, MASTER_KEY);
    await other.put({ name: 'cached', value: 'changed-value' });
    assert.equal((await vault.resolver().resolve('${vault:cached}')).text, 'cached-value');
    now = 61_001;
    assert.equal((await vault.resolver().resolve('${vault:cached}')).text, 'changed-value');
  });

  test('unknown secrets, other tenants and malformed names are missing, by name', async () => {
    const vault = await openVault(storage.secrets, MASTER_KEY);
    await assert.rejects(vault.resolver().resolve('x ${vault:nope} y'), (error: Error) => {
      assert.ok(error instanceof MissingSecretError);
      assert.equal(error.secretName, 'nope');
      return true;
    });
    await assert.rejects(
      vault.resolver().resolve('${vault:acme/openai-key}'),
      /Secret 'acme\/openai-key' is not in the vault/,
    );
    await assert.rejects(vault.resolver().resolve('${vault:bad*name}'), /Secret 'bad\*name' is not in the vault/);
    await assert.rejects(
      vault.put({ name: 'bad name', value: 'v' }),
      (error: Error) => error instanceof AppError && error.kind === 'invalid',
    );
    await assert.rejects(vault.put({ name: 'x'.repeat(201), value: 'v' }), /not a valid secret name/);
    await assert.rejects(vault.put({ name: 'empty', value: '' }), /must not be empty/);
  });

  test('a wrong master key is refused at start-up; the right one reads the secrets back', async () => {
    await (await openVault(storage.secrets, MASTER_KEY)).put({ name: 'survives', value: 'survivor-value' });
    await assert.rejects(openVault(storage.secrets, 'another master key'), (error: Error) => {
      assert.ok(error instanceof VaultKeyMismatchError);
      assert.match(error.message, /does not match/);
      assert.ok(!error.message.includes('another master key') && !error.message.includes(MASTER_KEY));
      return true;
    });
    const reopened = await openVault(storage.secrets, MASTER_KEY);
    assert.equal((await reopened.resolver().resolve('${vault:survives}')).text, 'survivor-value');
  });

  test('a tampered or moved ciphertext is refused, not returned as garbage', async () => {
    const vault = await openVault(storage.secrets, MASTER_KEY);
    await vault.put({ name: 'original', value: 'original-value' });
    await vault.put({ name: 'target', value: 'target-value' });
    storage.db
      .prepare(`UPDATE vault_secrets SET ciphertext = (SELECT ciphertext FROM vault_secrets WHERE name = 'original'),
      iv = (SELECT iv FROM vault_secrets WHERE name = 'original'), tag = (SELECT tag FROM vault_secrets WHERE name = 'original')
      WHERE name = 'target'`)
      .run();
    const fresh = await openVault(storage.secrets, MASTER_KEY);
    await assert.rejects(fresh.resolver().resolve('${vault:target}'), /cannot open the secret 'target'/);
  });

  test('a disabled vault answers 503 for every operation; its resolver reports references as missing', async () => {
    const vault = await openVault(storage.secrets, undefined);
    assert.equal(vault.enabled, false);
    const unavailable = (error: Error) =>
      error instanceof AppError &&
      error.kind === 'unavailable' &&
      /vault is disabled: set svc\.vault\.master-key/.test(error.message);
    await assert.rejects(vault.put({ name: 'a', value: 'b' }), unavailable);
    await assert.rejects(vault.writeSecret('a', 'b'), unavailable);
    await assert.rejects(vault.list(), unavailable);
    await assert.rejects(vault.describe('a'), unavailable);
    await assert.rejects(vault.remove('a'), unavailable);
    await assert.rejects(vault.resolver().resolve('${vault:survives}'), (error: Error) => {
      assert.ok(error instanceof MissingSecretError);
      assert.match(error.message, /Secret 'survives' cannot be read: the vault is disabled/);
      return true;
    });
  });
});
