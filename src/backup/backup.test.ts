import assert from 'node:assert/strict';
import { test } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { scrubSecretFields } from '../security/secret-scrubbing.ts';
import { normalizedEntryName, readZip, unsafeEntryName, ZipTooLargeError } from './zip-reader.ts';

test('entry names: relative paths only', () => {
  assert.equal(unsafeEntryName('a/b/c.json'), undefined);
  assert.equal(unsafeEntryName('a/..b/c.json'), undefined);
  for (const name of ['../x', 'a/../x', '/x', 'C:x', 'c:/x', '']) assert.ok(unsafeEntryName(name), name);
});

test('entry names written with backslashes are read with slashes, and still refused when unsafe', () => {
  assert.equal(normalizedEntryName('a\\1\\b.workflow.json'), 'a/1/b.workflow.json');
  assert.equal(unsafeEntryName(normalizedEntryName('a\\1\\b.workflow.json')), undefined);
  for (const name of ['..\\x', 'a\\..\\x', '\\x', '\\\\host\\share\\x', 'C:\\x']) {
    assert.ok(unsafeEntryName(normalizedEntryName(name)), name);
  }
});

test('readZip returns the files, skips folders, and refuses archives beyond the limits', async () => {
  const zip = zipSync({
    'a.json': strToU8('{"a":1}'),
    'folder/': new Uint8Array(0),
    'folder/b.txt': strToU8('x'.repeat(1000)),
  });
  const files = await readZip(zip, { maxUnpackedBytes: 10_000, maxEntries: 10 });
  assert.deepEqual([...files.keys()], ['a.json', 'folder/b.txt']);
  assert.equal(new TextDecoder().decode(files.get('a.json')), '{"a":1}');
  await assert.rejects(readZip(zip, { maxUnpackedBytes: 500, maxEntries: 10 }), ZipTooLargeError);
  await assert.rejects(readZip(zip, { maxUnpackedBytes: 10_000, maxEntries: 2 }), /at most 2/);
});

test('secret scrubbing keeps vault references and templates, blanks literal credentials', () => {
  const { body, scrubbed } = scrubSecretFields('agent', {
    channels: [
      {
        type: 'svc://ai.svc.channel.messenger',
        config: { appSecret: 'literal', verificationToken: '${vault:verify}', pageName: 'shop' },
      },
    ],
  });
  assert.deepEqual(body, {
    channels: [
      {
        type: 'svc://ai.svc.channel.messenger',
        config: { appSecret: '', verificationToken: '${vault:verify}', pageName: 'shop' },
      },
    ],
  });
  assert.deepEqual(scrubbed, [{ path: '$.channels[0].config.appSecret' }]);
});
