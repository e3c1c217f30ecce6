import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  deriveKeyEncryptionKey,
  KEK_ITERATIONS,
  keyCheckValue,
  newDataKey,
  open,
  sameKeyCheckValue,
  seal,
  secretAad,
  VaultIntegrityError,
} from './vault-crypto.ts';

const flipFirstByte = (base64: string) => {
  const bytes = Buffer.from(base64, 'base64');
  bytes[0] = bytes[0]! ^ 0x01;
  return bytes.toString('base64');
};

test('seal then open returns the plaintext; each seal uses a fresh 96-bit IV', () => {
  const key = newDataKey();
  const plaintext = Buffer.from('sk-live-\u00e9\u2713-value', 'utf8');
  const first = seal(key, plaintext, secretAad('default', 'api'));
  const second = seal(key, plaintext, secretAad('default', 'api'));
  assert.equal(Buffer.from(first.iv, 'base64').length, 12);
  assert.equal(Buffer.from(first.tag, 'base64').length, 16);
  assert.notEqual(first.iv, second.iv);
  assert.notEqual(first.ciphertext, second.ciphertext);
  assert.ok(!first.ciphertext.includes(plaintext.toString('base64')));
  assert.deepEqual(open(key, first, secretAad('default', 'api'), 'x'), plaintext);
  assert.deepEqual(open(key, second, secretAad('default', 'api'), 'x'), plaintext);
});

test('a changed ciphertext, IV or tag, another name or tenant, or another key does not open', () => {
  const key = newDataKey();
  const box = seal(key, Buffer.from('the value'), secretAad('default', 'api'));
  const refuses = (run: () => unknown) =>
    assert.throws(run, (error: Error) => {
      assert.ok(error instanceof VaultIntegrityError);
      assert.match(error.message, /cannot open the secret 'api'/);
      assert.ok(!error.message.includes('the value'));
      return true;
    });
  refuses(() =>
    open(key, { ...box, ciphertext: flipFirstByte(box.ciphertext) }, secretAad('default', 'api'), "the secret 'api'"),
  );
  refuses(() => open(key, { ...box, iv: flipFirstByte(box.iv) }, secretAad('default', 'api'), "the secret 'api'"));
  refuses(() => open(key, { ...box, tag: flipFirstByte(box.tag) }, secretAad('default', 'api'), "the secret 'api'"));
  refuses(() =>
    open(
      key,
      { ...box, tag: Buffer.from(box.tag, 'base64').subarray(0, 12).toString('base64') },
      secretAad('default', 'api'),
      "the secret 'api'",
    ),
  );
  refuses(() => open(key, box, secretAad('default', 'other'), "the secret 'api'"));
  refuses(() => open(key, box, secretAad('acme', 'api'), "the secret 'api'"));
  refuses(() => open(newDataKey(), box, secretAad('default', 'api'), "the secret 'api'"));
});

test('the key-encryption key is PBKDF2-SHA256 of the master key; its check value tells keys apart', async () => {
  assert.ok(KEK_ITERATIONS >= 600_000);
  const kek = await deriveKeyEncryptionKey('correct horse battery staple', 1000);
  assert.equal(kek.length, 32);
  assert.deepEqual(
    await deriveKeyEncryptionKey('correct horse battery staple', 1000),
    kek,
    'deterministic: the salt is fixed',
  );
  const other = await deriveKeyEncryptionKey('correct horse battery stapler', 1000);
  assert.notDeepEqual(other, kek);
  assert.ok(sameKeyCheckValue(keyCheckValue(kek), keyCheckValue(kek)));
  assert.ok(!sameKeyCheckValue(keyCheckValue(kek), keyCheckValue(other)));
  assert.ok(!keyCheckValue(kek).includes(kek.toString('hex')));
});
