import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactUrl, scrubSecrets } from './redact.ts';

test('redactUrl masks the password and a password query parameter, keeps the rest', () => {
  assert.equal(redactUrl('postgres://svc:secret@db:5432/app'), 'postgres://svc:***@db:5432/app');
  assert.equal(redactUrl('postgres://db/app?user=svc&password=secret'), 'postgres://db/app?user=svc&password=***');
  assert.equal(redactUrl('postgres://svc@db/app'), 'postgres://svc@db/app');
  assert.equal(redactUrl('not a url secret'), '<unparseable connection URL>');
});

test('scrubSecrets removes the URL and its raw or decoded password from a message', () => {
  const url = 'postgres://svc:p%40ss@db/app';
  assert.equal(scrubSecrets(`cannot reach ${url}`, url), 'cannot reach postgres://svc:***@db/app');
  assert.equal(scrubSecrets('auth failed for p@ss and p%40ss', url), 'auth failed for *** and ***');
  assert.equal(scrubSecrets('bad url: not a url secret', 'not a url secret'), 'bad url: <unparseable connection URL>');
});
