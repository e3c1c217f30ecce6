import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { publishedSchemas } from '../scripts/cli-schemas.ts';
import {
  createAgent,
  createResource,
  deploy,
  idFromLocation,
  onEveryMessage,
  startConversation,
} from './support/agents.ts';
import { call, client, type RequestOptions } from './support/http.ts';
import { SERVICE_AUDIENCE, startIdentityProvider, type TestIdentityProvider } from './support/oidc.ts';
import { createTestDatabase } from './support/postgres.ts';
import { startServiceProcess, type ServiceProcess } from './support/process.ts';
import { type StoreType, storeTypes } from './support/server.ts';

/**
 * The `svc-agents` CLI (issue 22) as a user runs it: a child process talking to the service, itself a child process
 * over each store, through its REST API only.
 */

const ROOT = new URL('..', import.meta.url).pathname;
const UPSTREAM_EXPORTS = join(ROOT, '../shared/fixtures/upstream-exports');

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runCli(args: readonly string[], env: Record<string, string> = {}, cwd = ROOT): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The service in its own process over a store of its own; `stop()` ends it and removes the store. */
async function startService(
  store: StoreType,
  extra: Record<string, string> = {},
): Promise<{ url: string; process: ServiceProcess; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-cli-'));
  const database = store === 'postgres' ? await createTestDatabase() : undefined;
  const service = startServiceProcess({
    SVC_HTTP_PORT: '0',
    SVC_VAULT_MASTER_KEY: 'a-master-key-for-the-cli-tests',
    SVC_DATASTORE_TYPE: store,
    ...(database ? { SVC_DATASTORE_POSTGRES_URL: database.url } : { SVC_DATASTORE_SQLITE_PATH: join(dir, 'svc.db') }),
    ...extra,
  });
  const stop = async () => {
    await service.stop();
    await database?.drop();
    await rm(dir, { recursive: true, force: true });
  };
  // A service that never says it listens is stopped here: its caller's `after` has nothing to stop, and a process
  // left running would keep the test run from ending.
  const url = await service.listening().catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, process: service, stop };
}

const named = async (api: ReturnType<typeof client>, location: string, name: string) => {
  const answer = await api.patch(`/descriptorstore/descriptors/${idFromLocation(location)}`, {
    json: { operation: 'SET', document: { name } },
  });
  assert.equal(answer.status, 200, answer.text);
  return location;
};

/** An agent answering every message with "Hello there", its resources named. */
async function buildGreeter(api: ReturnType<typeof client>): Promise<string> {
  const rules = await named(
    api,
    await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('greet')),
    'Every message',
  );
  const outputs = await named(
    api,
    await createResource(api, '/outputstore/outputsets', {
      outputSet: [{ action: 'greet', outputs: [{ valueAlternatives: [{ type: 'text', text: 'Hello there' }] }] }],
    }),
    'Greetings',
  );
  const workflow = await named(
    api,
    await createResource(api, '/packagestore/packages', {
      packageExtensions: [
        { type: 'svc://ai.svc.behavior', config: { uri: rules } },
        { type: 'svc://ai.svc.output', config: { uri: outputs } },
      ],
    }),
    'Greeter workflow',
  );
  return idFromLocation(
    await named(api, await createResource(api, '/agentstore/agents', { packages: [workflow] }), 'Greeter'),
  );
}

async function filesOf(folder: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      files[path.slice(folder.length + 1)] = await readFile(path, 'utf8');
    }
  return files;
}

async function edit(file: string, from: string, to: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  assert.ok(text.includes(from), `${file} holds ${from}`);
  await writeFile(file, text.replace(from, to));
}

const reply = async (api: ReturnType<typeof client>, agentId: string) =>
  (await startConversation(api, agentId, { body: { input: 'hi' } })).conversationOutputs[1].output;

for (const store of storeTypes) {
  describe(`svc-agents CLI on ${store}`, () => {
    let service: Awaited<ReturnType<typeof startService>>;
    let api: ReturnType<typeof client>;
    let work: string;
    let agentId: string;
    let env: Record<string, string>;
    const folder = () => join(work, 'greeter');
    const cli = (...args: string[]) => runCli(args, env);
    const currentVersion = async (path: string) => (await api.get(`${path}/currentversion`)).json as number;

    before(async () => {
      service = await startService(store);
      api = client(() => service.url);
      env = { SVC_AGENTS_SERVER: service.url };
      work = await mkdtemp(join(tmpdir(), 'svc-cli-folders-'));
      agentId = await buildGreeter(api);
      await deploy(api, agentId);
      const conversation = await startConversation(api, agentId, { body: { input: 'hi' } });
      const recorded = await api.post(`/transcriptstore/transcripts/from-conversation/${conversation.conversationId}`);
      assert.equal(recorded.status, 201, recorded.text);
      await named(api, recorded.headers.get('location')!, 'Says hello');
    });
    after(async () => {
      await service?.stop();
      await rm(work, { recursive: true, force: true });
    });

    it('pull writes one readable file per resource, named by its name, and the same bytes when pulled again', async () => {
      const pulled = await cli('pull', agentId, folder());
      assert.equal(pulled.code, 0, pulled.stderr);
      const files = await filesOf(folder());
      assert.deepEqual(Object.keys(files).sort(), [
        'agent.yaml',
        'behaviorsets/every-message.yaml',
        'outputsets/greetings.yaml',
        'transcripts/says-hello.yaml',
        'workflows/greeter-workflow.yaml',
      ]);
      assert.match(files['agent.yaml']!, new RegExp(`^kind: agent\nid: ${agentId}\nname: Greeter\n`));
      assert.match(files['outputsets/greetings.yaml']!, /text: Hello there/);
      assert.doesNotMatch(files['transcripts/says-hello.yaml']!, /agentId|agentVersion/);
      assert.equal((await cli('pull', agentId, folder())).code, 0);
      assert.deepEqual(await filesOf(folder()), files);
    });

    it('plan of a folder just pulled: no changes, exit code 0; test: its transcript passes', async () => {
      const plan = await cli('plan', folder());
      assert.equal(plan.code, 0, plan.stdout + plan.stderr);
      assert.match(plan.stdout, /No changes/);
      const tested = await cli('test', folder());
      assert.equal(tested.code, 0, tested.stdout + tested.stderr);
      assert.match(tested.stdout, /pass Says hello/);
      assert.match(tested.stdout, /1 of 1 transcripts passed against agent \w+ version 1/);
    });

    it('an edited file: plan shows exactly that change and the versions it makes, exit code 2', async () => {
      await edit(join(folder(), 'outputsets/greetings.yaml'), 'text: Hello there', 'text: Good day');
      const plan = await cli('plan', folder(), '--json');
      assert.equal(plan.code, 2, plan.stderr);
      const body = JSON.parse(plan.stdout);
      assert.equal(body.changed, true);
      assert.deepEqual(body.agent, { id: agentId, fromVersion: 1, toVersion: 2 });
      const byFile = Object.fromEntries(body.resources.map((r: { file: string }) => [r.file, r]));
      assert.deepEqual(byFile['outputsets/greetings.yaml'].changes, [
        {
          path: '$.config.outputSet[0].outputs[0].valueAlternatives[0].text',
          before: 'Hello there',
          after: 'Good day',
        },
      ]);
      assert.equal(byFile['outputsets/greetings.yaml'].toVersion, 2);
      // The workflow and the agent change only by the new versions they reference.
      assert.deepEqual(
        byFile['workflows/greeter-workflow.yaml'].changes.map((c: { path: string }) => c.path),
        ['$.config.packageExtensions[1].config.uri'],
      );
      assert.match(byFile['workflows/greeter-workflow.yaml'].changes[0].after, /\?version=2$/);
      assert.deepEqual(
        byFile['agent.yaml'].changes.map((c: { path: string }) => c.path),
        ['$.config.packages[0]'],
      );
      for (const file of ['behaviorsets/every-message.yaml', 'transcripts/says-hello.yaml'])
        assert.equal(byFile[file].action, 'unchanged', file);

      const text = await cli('plan', folder());
      assert.equal(text.code, 2);
      assert.match(
        text.stdout,
        /~ update output set 'Greetings' \(outputsets\/greetings.yaml\): version 1 -> 2\n\s+~ \$\.config\.outputSet\[0\]\.outputs\[0\]\.valueAlternatives\[0\]\.text: "Hello there" -> "Good day"\n/,
      );
      // Not a terminal: no colour codes.
      assert.ok(!text.stdout.includes('\u001b['), 'no escape codes');
    });

    it('apply makes new versions, deploys and waits for READY; the agent answers with the change', async () => {
      const outputSetId = idFromLocation(
        (await api.get(`/outputstore/outputsets/descriptors?filter=Greetings`)).json[0].resource,
      );
      assert.deepEqual(await reply(api, agentId), ['Hello there']);
      const applied = await cli('apply', folder(), '--deploy', 'production');
      assert.equal(applied.code, 0, applied.stdout + applied.stderr);
      assert.match(applied.stdout, /Applied: agent \w+ version 2\.\nDeployed to production: READY\./);
      assert.deepEqual(await reply(api, agentId), ['Good day']);
      // New versions, not overwrites.
      assert.equal(await currentVersion(`/outputstore/outputsets/${outputSetId}`), 2);
      const first = await api.get(`/outputstore/outputsets/${outputSetId}?version=1`);
      assert.match(first.text, /Hello there/);

      const plan = await cli('plan', folder());
      assert.equal(plan.code, 0, plan.stdout);
      const again = await cli('apply', folder());
      assert.equal(again.code, 0);
      assert.equal(await currentVersion(`/agentstore/agents/${agentId}`), 2, 'an apply without changes writes nothing');
    });

    it('test runs the transcripts against the applied version and exits 1 when one fails, with the diff', async () => {
      const tested = await cli('test', folder());
      assert.equal(tested.code, 1, tested.stdout + tested.stderr);
      assert.match(tested.stdout, /FAIL Says hello/);
      assert.match(tested.stdout, /step 1 \("hi"\): output/);
      assert.match(tested.stdout, /- \[0\] "Hello there"\n\s+\+ \[0\] "Good day"/);
      const json = JSON.parse((await cli('test', folder(), '--json')).stdout);
      assert.equal(json.passed, false);
      assert.equal(json.agentVersion, 2);
    });

    it('apply of a folder the server refuses changes nothing and names the file and line', async () => {
      const broken = join(work, 'broken');
      await cp(folder(), broken, { recursive: true });
      await edit(join(broken, 'outputsets/greetings.yaml'), 'text: Good day', 'text: Never applied');
      // Valid for the schema, refused by the server: an input matcher whose expressions do not parse.
      const rulesFile = join(broken, 'behaviorsets/every-message.yaml');
      const rules = parse(await readFile(rulesFile, 'utf8'));
      rules.config.behaviorGroups[0].behaviorRules[0].conditions.push({
        type: 'inputmatcher',
        configs: { expressions: '((((' },
      });
      await writeFile(rulesFile, stringify(rules));
      const before = await Promise.all([
        currentVersion(`/agentstore/agents/${agentId}`),
        api.get(`/outputstore/outputsets/descriptors`).then((a) => a.text),
      ]);
      const applied = await cli('apply', broken, '--deploy', 'production');
      assert.equal(applied.code, 1, applied.stdout + applied.stderr);
      assert.match(applied.stderr, /error: behaviorsets\/every-message\.yaml:\d+: .*'expressions' does not parse/);
      const afterwards = await Promise.all([
        currentVersion(`/agentstore/agents/${agentId}`),
        api.get(`/outputstore/outputsets/descriptors`).then((a) => a.text),
      ]);
      assert.deepEqual(afterwards, before);
      assert.deepEqual(await reply(api, agentId), ['Good day']);
    });

    it('validate checks the files offline with file:line errors; apply refuses an invalid folder before any request', async () => {
      const valid = await runCli(['validate', folder()]);
      assert.equal(valid.code, 0, valid.stdout);
      assert.match(valid.stdout, /5 files are valid/);

      const invalid = join(work, 'invalid');
      await cp(folder(), invalid, { recursive: true });
      await edit(
        join(invalid, 'outputsets/greetings.yaml'),
        'text: Good day',
        'text: Good day\n              colour: red',
      );
      const behaviorSetId = /^id: (\w+)$/m.exec(
        await readFile(join(invalid, 'behaviorsets/every-message.yaml'), 'utf8'),
      )![1]!;
      await edit(join(invalid, 'workflows/greeter-workflow.yaml'), behaviorSetId, '0123456789abcdef01234567');
      const checked = await runCli(['validate', invalid]);
      assert.equal(checked.code, 1);
      const lines = checked.stdout.trim().split('\n');
      assert.equal(lines.length, 3, checked.stdout);
      assert.match(lines[0]!, /^behaviorsets\/every-message\.yaml:1: error the agent does not use this behavior set/);
      assert.match(lines[1]!, /^outputsets\/greetings\.yaml:\d+: error .*'colour'/);
      assert.match(
        lines[2]!,
        /^workflows\/greeter-workflow\.yaml:\d+: error the reference names behavior set 0123456789abcdef01234567, which is not in the folder/,
      );
      const lineOf = async (problem: string, file: string) =>
        (await readFile(join(invalid, file), 'utf8')).split('\n')[Number(/:(\d+):/.exec(problem)![1]) - 1]!;
      assert.match(await lineOf(lines[1]!, 'outputsets/greetings.yaml'), /colour: red/);
      assert.match(await lineOf(lines[2]!, 'workflows/greeter-workflow.yaml'), /uri: .*0123456789abcdef01234567/);

      const json = JSON.parse((await runCli(['validate', invalid, '--json'])).stdout);
      assert.equal(json.valid, false);
      assert.equal(json.problems.length, 3);

      // No server is named: validate needs none, and apply fails on the folder before it needs one.
      const applied = await runCli(['apply', invalid, '--server', 'http://127.0.0.1:9']);
      assert.equal(applied.code, 1);
      assert.match(applied.stderr, /greetings\.yaml:\d+: .*colour/);

      const unreadable = join(work, 'unreadable');
      await cp(folder(), unreadable, { recursive: true });
      await writeFile(join(unreadable, 'behaviorsets/extra.yaml'), 'kind: behavior\nkind: output\n');
      const parsed = await runCli(['validate', unreadable]);
      assert.equal(parsed.code, 1);
      assert.match(parsed.stdout, /^behaviorsets\/extra\.yaml:2: error Map keys must be unique/);
    });

    it('a folder the server does not know is created (its ids kept as origin ids), and matched by them from then on', async () => {
      const copy = join(work, 'copy');
      await cp(folder(), copy, { recursive: true });
      const files = await filesOf(copy);
      const ids = Object.values(files).map((text) => /^id: (\w+)$/m.exec(text)![1]!);
      const fresh = new Map(ids.map((id, i) => [id, `${'fedcba98765432'}${String(i).padStart(10, '0')}`]));
      for (const [file, text] of Object.entries(files))
        await writeFile(
          join(copy, file),
          [...fresh].reduce((t, [id, to]) => t.replaceAll(id, to), text),
        );
      const plan = JSON.parse((await cli('plan', copy, '--json')).stdout);
      assert.deepEqual(
        plan.resources.map((r: { action: string }) => r.action),
        ['create', 'create', 'create', 'create', 'create'],
      );
      const applied = await cli('apply', copy, '--deploy', 'production', '--json');
      assert.equal(applied.code, 0, applied.stdout + applied.stderr);
      const { agentId: created, agentVersion } = JSON.parse(applied.stdout);
      assert.notEqual(created, agentId);
      assert.equal(agentVersion, 1);
      assert.deepEqual(await reply(api, created), ['Good day']);
      const again = await cli('plan', copy);
      assert.equal(again.code, 0, again.stdout);

      // A new name is set on the resource without a new version of it; a pull names the file after it.
      await edit(join(copy, 'outputsets/greetings.yaml'), 'name: Greetings', 'name: Salutations');
      const renaming = JSON.parse((await cli('plan', copy, '--json')).stdout);
      const outputs = renaming.resources.find((r: { kind: string }) => r.kind === 'output');
      assert.deepEqual(outputs.changes, [{ path: '$.name', before: 'Greetings', after: 'Salutations' }]);
      assert.equal(outputs.toVersion, outputs.fromVersion);
      assert.equal((await cli('apply', copy)).code, 0);
      const descriptor = await api.get(`/descriptorstore/descriptors/${outputs.serverId}`);
      assert.equal(descriptor.json.name, 'Salutations');
      assert.match(descriptor.json.resource, /\?version=1$/);
      assert.equal((await cli('pull', created, copy)).code, 0);
      assert.ok(Object.keys(await filesOf(copy)).includes('outputsets/salutations.yaml'));
      assert.equal((await cli('plan', copy)).code, 0);
    });

    it('pull then plan of upstream exports (after import) and of the agents the tests build: no changes', async () => {
      const zips = (await readdir(UPSTREAM_EXPORTS)).filter((name) => name.endsWith('.zip'));
      const agents: string[] = [];
      for (const zip of zips) {
        const imported = await api.post('/backup/import?strategy=create', {
          body: await readFile(join(UPSTREAM_EXPORTS, zip)),
          headers: { 'content-type': 'application/zip' },
        });
        assert.equal(imported.status, 201, `${zip}: ${imported.text}`);
        agents.push(imported.json.agentId);
      }
      agents.push(await createAgent(api, { outputSet: { outputSet: [{ action: 'x', outputs: [] }] }, name: 'Plain' }));
      agents.push(await buildToolAgent(api));
      for (const [i, id] of agents.entries()) {
        const target = join(work, `round-trip-${i}`);
        const pulled = await cli('pull', id, target);
        assert.equal(pulled.code, 0, `${zips[i] ?? id}: ${pulled.stderr}`);
        const plan = await cli('plan', target);
        assert.equal(plan.code, 0, `${zips[i] ?? id}: ${plan.stdout}${plan.stderr}`);
      }
    });
  });
}

/** An agent with HTTP calls, an LLM task whose key is a vault reference, a property setter and a dictionary. */
async function buildToolAgent(api: ReturnType<typeof client>): Promise<string> {
  const stored = await api.put('/secretstore/secrets/default/llm-key', { json: { value: 'sk-very-secret-value' } });
  assert.equal(stored.status, 200, stored.text);
  const dictionary = await createResource(api, '/regulardictionarystore/regulardictionaries', {
    words: [{ word: 'hello', expressions: 'greeting(hello)' }],
  });
  const calls = await createResource(api, '/httpcallsstore/httpcalls', {
    targetServerUrl: 'http://127.0.0.1:9',
    httpCalls: [
      {
        name: 'weather',
        actions: ['lookup'],
        request: { method: 'get', path: '/weather', headers: { authorization: 'Bearer ${vault:llm-key}' } },
      },
    ],
  });
  const llm = await createResource(api, '/langchainstore/langchains', {
    tasks: [
      {
        id: 'chat',
        type: 'openai',
        actions: ['chat'],
        parameters: { apiKey: '${vault:llm-key}', baseUrl: 'http://127.0.0.1:9/v1', modelName: 'gpt-4o-mini' },
      },
    ],
  });
  const properties = await createResource(api, '/propertysetterstore/propertysetters', {
    setOnActions: [
      {
        actions: ['lookup'],
        setProperties: [{ name: 'asked', fromObjectPath: 'memory.current.input', scope: 'conversation' }],
      },
    ],
  });
  const id = await createAgent(api, {
    extensions: [
      {
        type: 'svc://ai.svc.parser',
        config: {},
        extensions: {
          dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: dictionary } }],
        },
      },
      {
        type: 'svc://ai.svc.behavior',
        config: { uri: await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('lookup', 'chat')) },
      },
      { type: 'svc://ai.svc.property', config: { uri: properties } },
      { type: 'svc://ai.svc.httpcalls', config: { uri: calls } },
      { type: 'svc://ai.svc.llm', config: { uri: llm } },
    ],
    name: 'Tools',
  });
  return id;
}

describe('svc-agents CLI: authentication, settings, secrets and the bundled schemas', () => {
  let idp: TestIdentityProvider;
  let service: Awaited<ReturnType<typeof startService>>;
  let api: ReturnType<typeof client>;
  let work: string;
  let agentId: string;
  const LITERAL_KEY = 'sk-literal-key-that-must-not-leak';

  before(async () => {
    idp = await startIdentityProvider();
    service = await startService('sqlite', {
      SVC_OIDC_TENANT_ENABLED: 'true',
      SVC_OIDC_AUTH_SERVER_URL: idp.issuer,
      SVC_OIDC_CLIENT_ID: SERVICE_AUDIENCE,
      SVC_AUTHORIZATION_ENABLED: 'true',
    });
    const token = await idp.token('admin');
    const withToken =
      (method: string) =>
      (path: string, options: RequestOptions = {}) =>
        call(service.url, method, path, {
          ...options,
          headers: { ...options.headers, authorization: `Bearer ${token}` },
        });
    api = {
      get: withToken('GET'),
      post: withToken('POST'),
      put: withToken('PUT'),
      patch: withToken('PATCH'),
      delete: withToken('DELETE'),
    };
    work = await mkdtemp(join(tmpdir(), 'svc-cli-auth-'));
    const llm = await createResource(api, '/langchainstore/langchains', {
      tasks: [
        {
          id: 'chat',
          type: 'openai',
          actions: ['chat'],
          parameters: { apiKey: LITERAL_KEY, modelName: 'gpt-4o-mini' },
        },
      ],
    });
    agentId = await createAgent(api, {
      extensions: [{ type: 'svc://ai.svc.llm', config: { uri: llm } }],
      name: 'Keyed',
    });
  });
  after(async () => {
    await service?.stop();
    await idp?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('the bundled JSON Schemas are the ones the server publishes', async () => {
    const bundled = JSON.parse(await readFile(join(ROOT, 'cli/schemas.json'), 'utf8'));
    const token = await idp.token('viewer');
    const published = await publishedSchemas(service.url, { authorization: `Bearer ${token}` });
    assert.deepEqual(Object.keys(bundled).sort(), Object.keys(published).sort());
    assert.deepEqual(bundled, published);
  });

  it('authenticates by the client-credentials grant, from flags or a settings file; a missing token is a clear 401', async () => {
    const target = join(work, 'by-flags');
    const pulled = await runCli([
      'pull',
      agentId,
      target,
      '--server',
      service.url,
      '--issuer',
      idp.issuer,
      '--client-id',
      'client-admin',
      '--client-secret',
      'secret-of-client-admin',
      '--scope',
      'api',
    ]);
    assert.equal(pulled.code, 0, pulled.stderr);

    await writeFile(
      join(work, '.svc-agents.yaml'),
      `server: ${service.url}\nissuer: ${idp.issuer}\nclientId: client-admin\nclientSecret: secret-of-client-admin\nscope: api\n`,
    );
    const planned = await runCli(['plan', 'by-flags'], {}, work);
    assert.equal(planned.stderr, '');
    assert.notEqual(planned.code, 1, planned.stdout);

    const byToken = await runCli(['plan', target], {
      SVC_AGENTS_SERVER: service.url,
      SVC_AGENTS_TOKEN: await idp.token('admin'),
    });
    assert.notEqual(byToken.code, 1, byToken.stderr);

    const anonymous = await runCli(['plan', target, '--server', service.url]);
    assert.equal(anonymous.code, 1);
    assert.match(anonymous.stderr, /answered 401/);
    const wrongSecret = await runCli(['plan', target, '--client-secret', 'wrong'], {}, work);
    assert.equal(wrongSecret.code, 1);
    assert.match(wrongSecret.stderr, /refused a token for client client-admin/);

    await writeFile(join(work, 'bad.yaml'), `server: ${service.url}\npassword: x\n`);
    const badSettings = await runCli(['plan', target, '--config', 'bad.yaml'], {}, work);
    assert.equal(badSettings.code, 1);
    assert.match(badSettings.stderr, /unknown settings \(password\)/);
    const noServer = await runCli(['plan', target]);
    assert.equal(noServer.code, 1);
    assert.match(noServer.stderr, /No server/);
  });

  it('a literal secret is left out of the files with a warning, and a plan shows it only as (secret)', async () => {
    const target = join(work, 'secret');
    const env = { SVC_AGENTS_SERVER: service.url, SVC_AGENTS_TOKEN: await idp.token('admin') };
    const pulled = await runCli(['pull', agentId, target], env);
    assert.equal(pulled.code, 0, pulled.stderr);
    assert.match(pulled.stderr, /warning: a secret value was left out .*apiKey/);
    const files = Object.values(await filesOf(target)).join('\n');
    assert.ok(!files.includes(LITERAL_KEY));
    const plan = await runCli(['plan', target], env);
    assert.equal(plan.code, 2);
    assert.match(plan.stdout, /~ \$\.config\.tasks\[0\]\.parameters\.apiKey: "\(secret\)" -> "\(secret\)"/);
    assert.ok(!plan.stdout.includes(LITERAL_KEY));
    const json = await runCli(['plan', target, '--json'], env);
    assert.ok(!json.stdout.includes(LITERAL_KEY));
  });
});
