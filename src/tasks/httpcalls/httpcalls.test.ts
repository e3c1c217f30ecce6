import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeploymentError } from '../../runtime/tasks.ts';
import { MissingSecretError, type SecretResolver } from '../../security/secret-references.ts';
import { passes } from '../../properties/http-code-validator.ts';
import { compileHttpCallSet } from './compile.ts';
import { storableResponseHeaders } from './credentials.ts';
import { compileFieldTemplate, encodePathSegment, resolveSecrets, SecretValues } from './field-template.ts';
import { selectCalls } from './httpcalls-task.ts';
import { buildRequest } from './request.ts';
import { backoffDelay } from '../../shared/retry.ts';
import { backoffOf, matcherSignals } from './retry.ts';

const vault: SecretResolver = {
  async resolve(text) {
    const value = text === '${vault:token}' ? 's3cr3t/value' : undefined;
    if (value === undefined) throw new MissingSecretError(text.slice(8, -1), 'is not in the vault');
    return { text: value, secretValues: [value] };
  },
};

const set = (calls: unknown[], targetServerUrl = 'https://api.example.com/v1/') =>
  compileHttpCallSet({ targetServerUrl, httpCalls: calls }, 'the set');

describe('field templates', () => {
  it('percent-encodes path values as a segment (only A-Z a-z 0-9 - _ ~ stay)', () => {
    assert.equal(encodePathSegment('a b/../c.d~e_f-g'), 'a%20b%2F%2E%2E%2Fc%2Ed~e_f-g');
    const path = compileFieldTemplate('/cities/{city}/x.json', [], { encodeValues: true });
    assert.equal(path.render({ city: 'New York/..' }), '/cities/New%20York%2F%2E%2E/x.json');
  });

  it('resolves only the references written in the configuration, never ones that came in through data', async () => {
    const names: string[] = [];
    const field = compileFieldTemplate('key=${vault:token}; user={input}', names);
    assert.deepEqual(names, ['token']);
    const rendered = field.render({ input: '${vault:token}' });
    const seen = new SecretValues();
    const resolved = await resolveSecrets(rendered, names, vault, seen);
    assert.equal(resolved.text, 'key=s3cr3t/value; user=${vault:token}');
    assert.equal(resolved.redacted, 'key=<REDACTED>; user=${vault:token}');
    assert.equal(seen.mask('a s3cr3t%2Fvalue b s3cr3t/value'), 'a <REDACTED> b <REDACTED>');
  });

  it('leaves ${vault:...} literal in fields that resolve no secrets', () => {
    assert.equal(compileFieldTemplate('x ${vault:token} {a}').render({ a: 1 }), 'x ${vault:token} 1');
  });
});

describe('request building', () => {
  it('joins targetServerUrl and path, adds query, headers and body; the record hides every secret', async () => {
    const [call] = set([
      {
        name: 'c',
        request: {
          method: 'post',
          path: 'items/{id}',
          queryParams: { q: '{q}', key: '${vault:token}' },
          headers: { Authorization: 'Bearer ${vault:token}', 'X-Id': '{id}', Cookie: 'plain' },
          body: '{"q":"{q}","k":"${vault:token}"}',
          contentType: 'application/json',
        },
      },
    ]).calls;
    const built = await buildRequest(call!, { id: 'a.b', q: 'x y' }, vault);
    assert.equal(built.outgoing.url.href, 'https://api.example.com/v1/items/a%2Eb?q=x+y&key=s3cr3t%2Fvalue');
    assert.equal(built.outgoing.method, 'POST');
    assert.equal(built.outgoing.headers.Authorization, 'Bearer s3cr3t/value');
    assert.equal(built.outgoing.headers['content-type'], 'application/json');
    assert.equal(built.outgoing.body, '{"q":"x y","k":"s3cr3t/value"}');
    assert.deepEqual(built.record, {
      uri: 'https://api.example.com/v1/items/a%2Eb?q=x+y&key=%3CREDACTED%3E',
      method: 'POST',
      headers: { Authorization: '<REDACTED>', 'X-Id': 'a.b', Cookie: '<REDACTED>', 'content-type': 'application/json' },
      queryParams: { q: 'x y', key: '<REDACTED>' },
      body: '{"q":"x y","k":"<REDACTED>"}',
    });
    assert.ok(!JSON.stringify(built.record).includes('s3cr3t'));
  });

  it('without secrets, the record holds the request as sent, with or without query parameters', async () => {
    const [plain, queried] = set([
      { name: 'plain', request: { method: 'post', path: 'items/{id}', body: '{"id":"{id}"}' } },
      { name: 'queried', request: { path: 'items', queryParams: { id: '{id}' }, headers: { 'X-Id': '{id}' } } },
    ]).calls;
    const sent = await buildRequest(plain!, { id: 'a b' }, vault);
    assert.equal(sent.outgoing.url.href, 'https://api.example.com/v1/items/a%20b');
    assert.deepEqual(sent.record, {
      uri: 'https://api.example.com/v1/items/a%20b',
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      queryParams: {},
      body: '{"id":"a b"}',
    });
    const withQuery = await buildRequest(queried!, { id: 'a b' }, vault);
    assert.equal(withQuery.outgoing.url.href, 'https://api.example.com/v1/items?id=a+b');
    assert.deepEqual(withQuery.record, {
      uri: 'https://api.example.com/v1/items?id=a+b',
      method: 'GET',
      headers: { 'X-Id': 'a b' },
      queryParams: { id: 'a b' },
    });
  });

  it('uses an absolute path as it is and sends no body with GET', async () => {
    const [call] = set([{ name: 'c', request: { path: 'http://other.example/x', body: 'ignored' } }]).calls;
    const built = await buildRequest(call!, {}, vault);
    assert.equal(built.outgoing.url.href, 'http://other.example/x');
    assert.equal(built.outgoing.body, undefined);
  });

  it('rejects with MissingSecretError naming an unknown secret', async () => {
    const [call] = set([{ name: 'c', request: { headers: { 'X-Key': '${vault:nope}' } } }]).calls;
    await assert.rejects(
      buildRequest(call!, {}, vault),
      (error: unknown) => error instanceof MissingSecretError && error.secretName === 'nope',
    );
  });
});

describe('stored response headers', () => {
  it('keeps each header under its lower-case and its canonical name, lists as lists, no credentials', () => {
    assert.deepEqual(
      storableResponseHeaders({
        'content-type': 'application/json',
        'x-request-id': 'r1',
        etag: '"e"',
        'x--odd-Name2': 'o',
        'x-served-by': ['a', 'b'],
        'set-cookie': ['s=1'],
        'x-session-id': 'secret',
        'www-authenticate': 'Basic',
        'x-none': undefined,
      }),
      {
        'content-type': 'application/json',
        'Content-Type': 'application/json',
        'x-request-id': 'r1',
        'X-Request-Id': 'r1',
        etag: '"e"',
        Etag: '"e"',
        'x--odd-Name2': 'o',
        'X--Odd-Name2': 'o',
        'x-served-by': ['a', 'b'],
        'X-Served-By': ['a', 'b'],
      },
    );
  });
});

describe('compilation', () => {
  it('needs a targetServerUrl', () => {
    assert.throws(
      () => compileHttpCallSet({ httpCalls: [] }, 'svc://x'),
      (error: unknown) => error instanceof DeploymentError && /targetServerUrl/.test(error.message),
    );
  });

  it('reports a malformed template with the call and field', () => {
    assert.throws(
      () => set([{ name: 'bad', request: { path: '/{#if x}' } }]),
      (error: unknown) => error instanceof DeploymentError && /'bad'.*request\.path/.test(error.message),
    );
  });

  it('defaults: GET, text/plain, responseObjectName = name; post-response validators run on 2xx', () => {
    const [call] = set([
      { name: 'c', postResponse: { propertyInstructions: [{ name: 'p', fromObjectPath: 'c.x' }] } },
    ]).calls;
    assert.equal(call!.request.method, 'GET');
    assert.equal(call!.request.contentType, 'text/plain');
    assert.equal(call!.responseObjectName, 'c');
    const validator = call!.postResponse.instructions[0]!.validator;
    assert.equal(passes(validator, 204), true);
    assert.equal(passes(validator, 404), false);
  });
});

describe('which calls run', () => {
  const { calls } = set([
    { name: 'a', actions: ['x'] },
    { name: 'b', actions: ['y', 'x'] },
    { name: 'c', actions: ['*'] },
    { name: 'd' },
  ]);
  const byName = new Map(calls.map((call) => [call.name, call]));
  const names = (actions: string[]) => selectCalls(calls, byName, actions).map((call) => call.name);

  it('by action, then by position; each once', () => {
    assert.deepEqual(names(['y', 'x']), ['b', 'c', 'a']);
    assert.deepEqual(names(['x']), ['a', 'b', 'c']);
  });

  it('httpcall(<name>) runs the named call', () => {
    assert.deepEqual(names(['httpcall(d)']), ['d', 'c']);
    assert.deepEqual(names([]), []);
  });
});

describe('retry', () => {
  const retry = (instruction: unknown) =>
    set([{ name: 'c', postResponse: { retryApiCallInstruction: instruction } }]).calls[0]!.postResponse.retry!;

  it('backs off exponentially, capped', () => {
    const compiled = retry({ exponentialBackoffDelayInMillis: 100, maxBackoffDelayInMillis: 350 });
    assert.deepEqual(
      [1, 2, 3, 4].map((attempt) => backoffDelay(backoffOf(compiled), attempt)),
      [100, 200, 350, 350],
    );
    assert.deepEqual([...compiled.retryOnHttpCodes], [502, 503]);
    assert.equal(compiled.maxRetries, 3);
  });

  it('signals through value matchers', () => {
    const compiled = retry({
      responseValuePathMatchers: [
        { valuePath: 'status', equals: 'pending' },
        { valuePath: 'done', equals: 'true', trueIfNoMatch: true },
      ],
    });
    assert.equal(matcherSignals(compiled, { status: 'pending', done: true }), true);
    assert.equal(matcherSignals(compiled, { status: 'ready', done: true }), false);
    assert.equal(matcherSignals(compiled, { status: 'ready', done: false }), true);
  });
});
