import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it, type TestContext } from 'node:test';
import { strFromU8, strToU8, unzipSync } from 'fflate';
import { createResource, idFromLocation, sendMessage, startConversation } from './support/agents.ts';
import { client } from './support/http.ts';
import { startTestServer, storeTypes, type TestServer } from './support/server.ts';
import {
  WEATHER_IDS,
  weatherAgentFiles,
  weatherAgentZip,
  withDeclaredSize,
  zipFiles,
} from './fixtures/upstream-zip.ts';

/** Export and import of agents as ZIP archives (SPEC "Export and import", reference §12.3–12.4). */

type Api = ReturnType<typeof client>;

const MAX_ZIP_BYTES = 200_000;
const MAX_ENTRIES = 40;
const limits = { 'svc.backup.max-zip-bytes': MAX_ZIP_BYTES, 'svc.backup.max-entries': MAX_ENTRIES };

const STORE_PATHS = [
  '/regulardictionarystore/regulardictionaries',
  '/behaviorstore/behaviorsets',
  '/outputstore/outputsets',
  '/packagestore/packages',
  '/agentstore/agents',
  '/propertysetterstore/propertysetters',
  '/httpcallsstore/httpcalls',
  '/langchainstore/langchains',
];

const LITERAL_KEY = 'sk-literal-secret-abcdefghijklmnopqrstuvwxyz';
const LITERAL_BEARER = 'Bearer literal-token-0123456789abcdef';

const text = (value: string) => ({ valueAlternatives: [{ type: 'text', text: value }] });
const dictionary = {
  words: [
    { word: 'hello', expressions: 'greeting(hello)' },
    { word: 'bye', expressions: 'goodbye(bye)' },
    { word: 'weather', expressions: 'weather(request)' },
  ],
};
const rules = {
  behaviorGroups: [
    {
      name: 'Smalltalk',
      behaviorRules: [
        {
          name: 'Welcome',
          actions: ['welcome'],
          conditions: [{ type: 'occurrence', configs: { maxTimesOccurred: '0', behaviorRuleName: 'Welcome' } }],
        },
        {
          name: 'Greeting',
          actions: ['greet'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)' } }],
        },
        {
          name: 'Goodbye',
          actions: ['say_goodbye', 'CONVERSATION_END'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'goodbye(*)' } }],
        },
        {
          name: 'Ask city',
          actions: ['ask_for_city'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'weather(*)' } }],
        },
        {
          name: 'City given',
          actions: ['city_given'],
          conditions: [{ type: 'actionmatcher', configs: { actions: 'ask_for_city', occurrence: 'lastStep' } }],
        },
      ],
    },
  ],
};
const properties = {
  setOnActions: [
    {
      actions: ['city_given'],
      setProperties: [{ name: 'chosenCity', fromObjectPath: 'memory.current.input', scope: 'conversation' }],
    },
  ],
};
/** Triggered by no rule: the calls are exported and imported, never made. */
const httpCalls = {
  targetServerUrl: 'http://127.0.0.1:9/api',
  httpCalls: [
    {
      name: 'lookup',
      actions: ['never_triggered_http'],
      request: {
        method: 'GET',
        path: '/lookup',
        headers: {
          Authorization: LITERAL_BEARER,
          'X-Api-Key': '${vault:weatherKey}',
          'X-Trace': 'plain',
          'X-User-Token': 'Bearer {properties.token}',
        },
      },
    },
  ],
};
const outputs = {
  outputSet: [
    { action: 'welcome', timesOccurred: 0, outputs: [text('Welcome!')] },
    { action: 'greet', timesOccurred: 0, outputs: [text('Hi there!')] },
    { action: 'say_goodbye', timesOccurred: 0, outputs: [text('See you soon!')] },
    { action: 'ask_for_city', timesOccurred: 0, outputs: [text('Which city?')] },
    { action: 'city_given', timesOccurred: 0, outputs: [text('Noted: {properties.chosenCity}.')] },
  ],
};
const llm = (httpCallsUri: string) => ({
  tasks: [
    {
      id: 'vaulted',
      type: 'openai',
      actions: ['never_triggered_llm'],
      parameters: { apiKey: '${vault:openai}', modelName: 'gpt-4o-mini' },
      tools: [httpCallsUri],
    },
    {
      id: 'literal',
      type: 'openai',
      actions: ['never_triggered_llm_too'],
      parameters: { apiKey: LITERAL_KEY, modelName: 'gpt-4o-mini', temperature: '0.2' },
    },
  ],
});

const create = createResource;

interface BuiltAgent {
  readonly agentId: string;
  readonly uris: Record<string, string>;
}

/** An agent with every extension type, built through the API. */
async function buildAgent(api: Api): Promise<BuiltAgent> {
  const uris: Record<string, string> = {};
  uris.dictionary = await create(api, '/regulardictionarystore/regulardictionaries', dictionary);
  uris.behavior = await create(api, '/behaviorstore/behaviorsets', rules);
  uris.property = await create(api, '/propertysetterstore/propertysetters', properties);
  uris.httpcalls = await create(api, '/httpcallsstore/httpcalls', httpCalls);
  uris.llm = await create(api, '/langchainstore/langchains', llm(uris.httpcalls));
  uris.output = await create(api, '/outputstore/outputsets', outputs);
  uris.workflow = await create(api, '/packagestore/packages', {
    packageExtensions: [
      {
        type: 'svc://ai.svc.parser',
        extensions: {
          dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: uris.dictionary } }],
        },
        config: {},
      },
      { type: 'svc://ai.svc.behavior', config: { uri: uris.behavior } },
      { type: 'svc://ai.svc.property', config: { uri: uris.property } },
      { type: 'svc://ai.svc.httpcalls', config: { uri: uris.httpcalls } },
      { type: 'svc://ai.svc.llm', config: { uri: uris.llm } },
      { type: 'svc://ai.svc.output', config: { uri: uris.output } },
      { type: 'svc://ai.svc.templating', config: {} },
    ],
  });
  uris.agent = await create(api, '/agentstore/agents', { packages: [uris.workflow] });
  const agentId = idFromLocation(uris.agent);
  const named = await api.patch(`/descriptorstore/descriptors/${agentId}`, {
    json: { operation: 'SET', document: { name: 'Backup test agent', description: 'every extension' } },
  });
  assert.equal(named.status, 200, named.text);
  return { agentId, uris };
}

/** Every descriptor's current-version reference of every store: equal snapshots mean nothing was written. */
async function storeSnapshot(api: Api): Promise<string[]> {
  const all: string[] = [];
  for (const path of STORE_PATHS) {
    const answer = await api.get(`${path}/descriptors?limit=0`);
    assert.equal(answer.status, 200, answer.text);
    all.push(...answer.json.map((d: { resource: string }) => d.resource));
  }
  return all.sort();
}

async function importZip(
  baseUrl: string,
  zip: Uint8Array,
  query = '',
  path = '/backup/import',
  contentType = 'application/zip',
) {
  const response = await fetch(`${baseUrl}${path}${query}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: zip,
  });
  const body = await response.text();
  let json: any;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text: body, json };
}

async function download(
  baseUrl: string,
  path: string,
): Promise<{ status: number; type: string | null; bytes: Uint8Array; text: string }> {
  const response = await fetch(baseUrl + path);
  const bytes = new Uint8Array(await response.arrayBuffer());
  return { status: response.status, type: response.headers.get('content-type'), bytes, text: strFromU8(bytes) };
}

/**
 * Deploys an agent version; when the deployment fails only because the HTTP-call or LLM task type is not
 * registered in this build, deploys a copy without those extensions instead (their actions never fire here).
 */
async function deployForConversation(api: Api, t: TestContext, agentId: string, version: number): Promise<string> {
  const deploy = async (id: string, v: number) =>
    api.post(`/administration/production/deploy/${id}?version=${v}&autoDeploy=false&waitForCompletion=true`);
  const answer = await deploy(agentId, version);
  assert.equal(answer.status, 200, answer.text);
  if (answer.json.status === 'READY') return agentId;
  assert.match(String(answer.json.error), /Unknown extension type 'svc:\/\/ai\.svc\.(httpcalls|llm)'/, answer.text);
  t.diagnostic(`NOTE: ${answer.json.error}; conversing with a copy without the HTTP-call and LLM extensions`);
  const agent = (await api.get(`/agentstore/agents/${agentId}?version=${version}`)).json;
  const packages: string[] = [];
  for (const uri of agent.packages) {
    const id = idFromLocation(uri);
    const workflowVersion = Number(/version=(\d+)/.exec(uri)![1]);
    const workflow = (await api.get(`/packagestore/packages/${id}?version=${workflowVersion}`)).json;
    const kept = workflow.packageExtensions.filter((e: { type: string }) => !/ai\.svc\.(httpcalls|llm)$/.test(e.type));
    packages.push(await create(api, '/packagestore/packages', { packageExtensions: kept }));
  }
  const copyId = idFromLocation(await create(api, '/agentstore/agents', { packages }));
  const copy = await deploy(copyId, 1);
  assert.equal(copy.json.status, 'READY', copy.text);
  return copyId;
}

/** A short rule-based conversation; returns the outputs of every turn. */
async function converse(api: Api, agentId: string): Promise<unknown[]> {
  const started = await startConversation(api, agentId, { query: '?userId=backup-tester' });
  const outputsSeen: unknown[] = [started.conversationOutputs.at(-1).output];
  for (const input of ['hello', 'weather', 'Vienna', 'bye']) {
    outputsSeen.push((await sendMessage(api, started.conversationId, input)).conversationOutputs[0].output);
  }
  return outputsSeen;
}

const EXPECTED_CONVERSATION = [['Welcome!'], ['Hi there!'], ['Which city?'], ['Noted: Vienna.'], ['See you soon!']];

function unzip(zip: Uint8Array): Record<string, any> {
  const files: Record<string, any> = {};
  for (const [name, bytes] of Object.entries(unzipSync(zip))) files[name] = JSON.parse(strFromU8(bytes));
  return files;
}

function rezip(files: Record<string, unknown>): Uint8Array {
  return zipFiles(files);
}

for (const storeType of storeTypes) {
  describe(`export and import on ${storeType}`, () => {
    let server: TestServer;
    let fresh: TestServer;
    const api = client(() => server.url);
    const freshApi = client(() => fresh.url);
    let built: BuiltAgent;
    let zip: Uint8Array;

    const fetchExport = async (agentId: string, version?: number) => {
      const exported = await api.post(`/backup/export/${agentId}${version ? `?agentVersion=${version}` : ''}`);
      assert.equal(exported.status, 200, exported.text);
      const location = exported.headers.get('location')!;
      const file = await download(server.url, location);
      assert.equal(file.status, 200, file.text);
      return { location, ...file };
    };

    before(async () => {
      server = await startTestServer(storeType, limits);
      fresh = await startTestServer(storeType, limits);
      built = await buildAgent(api);
      zip = (await fetchExport(built.agentId)).bytes;
    });
    after(async () => {
      await server?.dispose();
      await fresh?.dispose();
    });

    it('exports the reference layout: agent, workflow folder, resources, descriptors and metadata; literal secrets scrubbed', async () => {
      const { location, type, bytes } = await fetchExport(built.agentId);
      assert.equal(location, `/backup/export/${built.agentId}-1.zip`);
      assert.equal(type, 'application/zip');
      const files = unzip(bytes);
      const id = (uri: string) => idFromLocation(uri);
      const folder = `${id(built.uris.workflow!)}/1/`;
      const expected = [
        `${built.agentId}.agent.json`,
        `${built.agentId}.descriptor.json`,
        `${folder}${id(built.uris.workflow!)}.workflow.json`,
        `${folder}${id(built.uris.workflow!)}.descriptor.json`,
        `${folder}${id(built.uris.dictionary!)}.regulardictionary.json`,
        `${folder}${id(built.uris.dictionary!)}.descriptor.json`,
        `${folder}${id(built.uris.behavior!)}.behavior.json`,
        `${folder}${id(built.uris.behavior!)}.descriptor.json`,
        `${folder}${id(built.uris.property!)}.property.json`,
        `${folder}${id(built.uris.property!)}.descriptor.json`,
        `${folder}${id(built.uris.httpcalls!)}.httpcalls.json`,
        `${folder}${id(built.uris.httpcalls!)}.descriptor.json`,
        `${folder}${id(built.uris.llm!)}.langchain.json`,
        `${folder}${id(built.uris.llm!)}.descriptor.json`,
        `${folder}${id(built.uris.output!)}.output.json`,
        `${folder}${id(built.uris.output!)}.descriptor.json`,
        'metadata.json',
      ];
      assert.deepEqual(Object.keys(files).sort(), expected.sort());

      // Resource files hold the stored configuration (spec names), byte for byte where nothing was scrubbed.
      const raw = unzipSync(bytes);
      const storePaths = {
        dictionary: '/regulardictionarystore/regulardictionaries',
        behavior: '/behaviorstore/behaviorsets',
        property: '/propertysetterstore/propertysetters',
        output: '/outputstore/outputsets',
        workflow: '/packagestore/packages',
      };
      for (const [kind, path] of Object.entries(storePaths)) {
        const uri = built.uris[kind]!;
        const stored = await api.get(`${path}/${id(uri)}?version=1`);
        assert.equal(stored.status, 200, stored.text);
        const entry = Object.keys(raw).find(
          (name) => name.startsWith(`${folder}${id(uri)}.`) && !name.endsWith('.descriptor.json'),
        )!;
        assert.equal(strFromU8(raw[entry]!), stored.text, entry);
      }
      assert.deepEqual(files[`${built.agentId}.agent.json`], { packages: [built.uris.workflow] });

      const llmFile = files[`${folder}${id(built.uris.llm!)}.langchain.json`];
      assert.equal(llmFile.tasks[0].parameters.apiKey, '${vault:openai}', 'vault references stay');
      assert.equal(llmFile.tasks[1].parameters.apiKey, '', 'a literal key is scrubbed');
      assert.equal(llmFile.tasks[1].parameters.temperature, '0.2');
      assert.deepEqual(llmFile.tasks[0].tools, [built.uris.httpcalls]);
      const headers = files[`${folder}${id(built.uris.httpcalls!)}.httpcalls.json`].httpCalls[0].request.headers;
      assert.deepEqual(headers, {
        Authorization: '',
        'X-Api-Key': '${vault:weatherKey}',
        'X-Trace': 'plain',
        'X-User-Token': 'Bearer {properties.token}',
      });
      const everything = Object.values(raw)
        .map((b) => strFromU8(b))
        .join('\n');
      assert.ok(
        !everything.includes(LITERAL_KEY) && !everything.includes(LITERAL_BEARER),
        'no secret value in the archive',
      );

      const agentDescriptor = files[`${built.agentId}.descriptor.json`];
      assert.equal(agentDescriptor.resource, `svc://ai.svc.agent/agentstore/agents/${built.agentId}?version=1`);
      assert.equal(agentDescriptor.name, 'Backup test agent');
      assert.equal(agentDescriptor.description, 'every extension');

      const metadata = files['metadata.json'];
      assert.equal(metadata.formatVersion, 1);
      assert.equal(typeof metadata.serviceVersion, 'string');
      assert.ok(!Number.isNaN(Date.parse(metadata.exportedAt)));
      assert.deepEqual(metadata.agent, { id: built.agentId, version: 1, name: 'Backup test agent' });
      assert.deepEqual(metadata.files[`${folder}${id(built.uris.dictionary!)}.regulardictionary.json`], {
        kind: 'dictionary',
        originId: id(built.uris.dictionary!),
        version: 1,
      });
      assert.equal(Object.keys(metadata.files).length, 8);
      assert.deepEqual(metadata.scrubbedSecrets.map((s: { path: string }) => s.path).sort(), [
        '$.httpCalls[0].request.headers.Authorization',
        '$.tasks[1].parameters.apiKey',
      ]);
    });

    it('export answers 404 for an unknown agent, version or file name, and serves nothing outside the export area', async () => {
      assert.equal((await api.post('/backup/export/0123456789abcdef01234567')).status, 404);
      assert.equal((await api.post(`/backup/export/${built.agentId}?agentVersion=7`)).status, 404);
      for (const name of [
        'nothing.zip',
        `${built.agentId}-7.zip`,
        '..%2F..%2Fpackage.json',
        `${built.agentId}-1.zip.json`,
        '0123456789abcdef01234567-1.zip',
      ]) {
        const answer = await api.get(`/backup/export/${name}`);
        assert.equal(answer.status, 404, name);
        assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      }
    });

    it('create: new ids, origin ids, rewritten references; the copy converses like the original (same server)', async (t) => {
      const before = await storeSnapshot(api);
      const imported = await importZip(server.url, zip);
      assert.equal(imported.status, 201, imported.text);
      assert.match(
        imported.headers.get('location')!,
        /^svc:\/\/ai\.svc\.agent\/agentstore\/agents\/[0-9a-f]{24}\?version=1$/,
      );
      const { agentId, agentVersion } = imported.json;
      assert.notEqual(agentId, built.agentId);
      assert.equal(agentVersion, 1);
      assert.equal(imported.json.agent.originId, built.agentId);
      assert.equal(imported.json.resources.length, 7);
      assert.ok(imported.json.resources.every((r: { action: string }) => r.action === 'CREATE'));
      assert.equal((await storeSnapshot(api)).length, before.length + 8);

      const descriptor = await api.get(`/descriptorstore/descriptors/${agentId}`);
      assert.equal(descriptor.json.originId, built.agentId);
      assert.equal(descriptor.json.name, 'Backup test agent');
      const agent = (await api.get(`/agentstore/agents/${agentId}?version=1`)).json;
      const workflowId = idFromLocation(agent.packages[0]);
      assert.notEqual(workflowId, idFromLocation(built.uris.workflow!));
      assert.equal(
        (await api.get(`/descriptorstore/descriptors/${workflowId}`)).json.originId,
        idFromLocation(built.uris.workflow!),
      );
      const workflow = (await api.get(`/packagestore/packages/${workflowId}?version=1`)).json;
      const newIds = new Set(imported.json.resources.map((r: { targetId: string }) => r.targetId));
      assert.ok(newIds.has(idFromLocation(workflow.packageExtensions[0].extensions.dictionaries[0].config.uri)));
      for (const extension of workflow.packageExtensions.slice(1, 6))
        assert.ok(newIds.has(idFromLocation(extension.config.uri)), extension.type);
      const llmId = idFromLocation(workflow.packageExtensions[4].config.uri);
      const importedLlm = (await api.get(`/langchainstore/langchains/${llmId}?version=1`)).json;
      assert.equal(
        importedLlm.tasks[0].tools[0],
        workflow.packageExtensions[3].config.uri,
        'tool references are rewritten too',
      );

      const original = await deployForConversation(api, t, built.agentId, 1);
      const copy = await deployForConversation(api, t, agentId, 1);
      assert.deepEqual(await converse(api, original), EXPECTED_CONVERSATION);
      assert.deepEqual(await converse(api, copy), EXPECTED_CONVERSATION);
    });

    it('create into a fresh server, then merge keeps the agent id, adds a version and skips unchanged resources', async (t) => {
      const created = await importZip(fresh.url, zip);
      assert.equal(created.status, 201, created.text);
      const agentId = created.json.agentId;
      assert.deepEqual(
        await converse(freshApi, await deployForConversation(freshApi, t, agentId, 1)),
        EXPECTED_CONVERSATION,
      );

      const merged = await importZip(fresh.url, zip, '?strategy=merge');
      assert.equal(merged.status, 201, merged.text);
      assert.equal(merged.headers.get('location'), `svc://ai.svc.agent/agentstore/agents/${agentId}?version=2`);
      assert.equal(merged.json.agentId, agentId);
      assert.equal(merged.json.agentVersion, 2);
      assert.deepEqual(merged.json.agent.action, 'UPDATE');
      assert.ok(
        merged.json.resources.every((r: { action: string }) => r.action === 'SKIP'),
        merged.text,
      );

      // A changed output set: it and the workflow referencing it get a new version; the rest is skipped.
      const files = unzip(zip);
      const outputFile = Object.keys(files).find((name) => name.endsWith('.output.json'))!;
      files[outputFile].outputSet[1].outputs = [text('Hello again!')];
      const changed = rezip(files);
      const preview = await importZip(fresh.url, changed, '?strategy=merge', '/backup/import/preview');
      assert.equal(preview.status, 200, preview.text);
      const actions = Object.fromEntries(
        preview.json.resources.map((r: { kind: string; action: string }) => [r.kind, r.action]),
      );
      assert.deepEqual(actions, {
        dictionary: 'SKIP',
        behavior: 'SKIP',
        property: 'SKIP',
        httpcalls: 'SKIP',
        llm: 'SKIP',
        output: 'UPDATE',
        workflow: 'UPDATE',
      });
      assert.deepEqual(preview.json.agent, {
        originId: built.agentId,
        kind: 'agent',
        name: 'Backup test agent',
        action: 'UPDATE',
        targetId: agentId,
        targetVersion: 3,
      });

      // selectedResources limits the updates to the listed origin ids.
      const outputOrigin = idFromLocation(built.uris.output!);
      const unselected = await importZip(
        fresh.url,
        changed,
        `?strategy=merge&selectedResources=${idFromLocation(built.uris.dictionary!)}`,
        '/backup/import/preview',
      );
      assert.equal(unselected.json.resources.find((r: { kind: string }) => r.kind === 'output').action, 'SKIP');
      const selected = await importZip(
        fresh.url,
        changed,
        `?strategy=merge&selectedResources=${outputOrigin},${idFromLocation(built.uris.workflow!)}`,
      );
      assert.equal(selected.status, 201, selected.text);
      assert.equal(selected.json.agentVersion, 3);
      const output = selected.json.resources.find((r: { kind: string }) => r.kind === 'output');
      assert.equal(output.action, 'UPDATE');
      assert.equal(output.targetVersion, 2);
      const conversation = await converse(freshApi, await deployForConversation(freshApi, t, agentId, 3));
      assert.deepEqual(conversation[1], ['Hello again!']);
    });

    it('upgrade matches the target agent structurally, by targetAgentId or by name', async () => {
      const created = await importZip(fresh.url, zip);
      const target = created.json.agentId;
      await freshApi.patch(`/descriptorstore/descriptors/${target}`, {
        json: { operation: 'SET', document: { name: 'Upgrade target' } },
      });
      const files = unzip(zip);
      const dictionaryFile = Object.keys(files).find((name) => name.endsWith('.regulardictionary.json'))!;
      files[dictionaryFile].words.push({ word: 'hi', expressions: 'greeting(hi)' });
      // Different ids everywhere: only positions match.
      const upgraded = await importZip(fresh.url, rezip(files), `?strategy=upgrade&targetAgentId=${target}`);
      assert.equal(upgraded.status, 201, upgraded.text);
      assert.equal(upgraded.json.agentId, target);
      assert.equal(upgraded.json.agentVersion, 2);
      const actions = Object.fromEntries(
        upgraded.json.resources.map((r: { kind: string; action: string }) => [r.kind, r.action]),
      );
      assert.deepEqual(actions, {
        dictionary: 'UPDATE',
        behavior: 'SKIP',
        property: 'SKIP',
        httpcalls: 'SKIP',
        llm: 'SKIP',
        output: 'SKIP',
        workflow: 'UPDATE',
      });
      assert.ok(
        upgraded.json.resources.every((r: { targetId: string }) =>
          created.json.resources.some((c: { targetId: string }) => c.targetId === r.targetId),
        ),
      );

      files[`${built.agentId}.descriptor.json`].name = 'Upgrade target';
      const byName = await importZip(fresh.url, rezip(files), '?strategy=upgrade');
      assert.equal(byName.status, 201, byName.text);
      assert.equal(byName.json.agentId, target);
      assert.equal(byName.json.agentVersion, 3);
      files[`${built.agentId}.descriptor.json`].name = 'No such agent anywhere';
      assert.equal((await importZip(fresh.url, rezip(files), '?strategy=upgrade')).status, 404);
    });

    it('preview is a dry run: it lists every resource with its action and writes nothing', async () => {
      const before = await storeSnapshot(freshApi);
      const preview = await importZip(fresh.url, zip, '?strategy=create', '/backup/import/preview');
      assert.equal(preview.status, 200, preview.text);
      assert.equal(preview.json.strategy, 'create');
      assert.deepEqual(preview.json.agent, {
        originId: built.agentId,
        kind: 'agent',
        name: 'Backup test agent',
        action: 'CREATE',
      });
      assert.equal(preview.json.resources.length, 7);
      assert.deepEqual(preview.json.resources.map((r: { kind: string }) => r.kind).sort(), [
        'behavior',
        'dictionary',
        'httpcalls',
        'llm',
        'output',
        'property',
        'workflow',
      ]);
      const merge = await importZip(fresh.url, zip, '?strategy=merge', '/backup/import/preview');
      assert.equal(merge.status, 200, merge.text);
      assert.equal(merge.json.agent.action, 'UPDATE');
      // Without a strategy: what importing would do to the resources already here (matched by origin id).
      const unspecified = await importZip(fresh.url, zip, '', '/backup/import/preview');
      assert.equal(unspecified.status, 200, unspecified.text);
      assert.equal(unspecified.json.strategy, 'merge');
      assert.deepEqual(unspecified.json.agent, merge.json.agent);
      assert.deepEqual(unspecified.json.resources, merge.json.resources);
      assert.ok(
        unspecified.json.resources.some((r: { action: string }) => r.action === 'SKIP'),
        unspecified.text,
      );
      assert.deepEqual(await storeSnapshot(freshApi), before);
    });

    it('refuses bad ZIPs with a 4xx problem naming the problem, and writes nothing', async () => {
      const files = unzip(zip);
      const names = Object.keys(files);
      const agentFile = `${built.agentId}.agent.json`;
      const dictionaryFile = names.find((name) => name.endsWith('.regulardictionary.json'))!;
      const without = (name: string) => rezip(Object.fromEntries(Object.entries(files).filter(([n]) => n !== name)));
      const plus = (extra: Record<string, unknown>) => rezip({ ...files, ...extra });
      const many: Record<string, unknown> = {};
      for (let i = 0; i < MAX_ENTRIES; i++) many[`extra/${i}.json`] = {};
      const cases: [string, Uint8Array | string, number, RegExp, string?][] = [
        ['not a ZIP', strToU8('definitely not a zip archive'), 400, /not a readable ZIP/],
        ['empty body', new Uint8Array(0), 400, /not a readable ZIP|body is empty/],
        ['truncated', zip.slice(0, Math.floor(zip.length / 2)), 400, /not a readable ZIP/],
        [
          'damaged data',
          (() => {
            const copy = zip.slice();
            for (let i = 40; i < 200; i++) copy[i] = 0x55;
            return copy;
          })(),
          400,
          /not a readable ZIP/,
        ],
        ['body beyond the limit', randomBytes(MAX_ZIP_BYTES + 10), 413, /svc\.backup\.max-zip-bytes/],
        ['unpacks beyond the limit', plus({ 'padding.json': ' '.repeat(MAX_ZIP_BYTES) }), 413, /unpacks to more than/],
        [
          'lies about its size (bomb)',
          withDeclaredSize(plus({ 'bomb.json': '0'.repeat(150_000) }), 'bomb.json', 100),
          400,
          /more than its declared/,
        ],
        ['too many entries', plus(many), 400, /at most 40/],
        ['a .. entry', plus({ '../evil.json': {} }), 400, /'\.\.' segment/],
        ['an absolute entry', plus({ '/etc/evil.json': {} }), 400, /absolute path/],
        ['a .. entry written with backslashes', plus({ 'a\\..\\..\\evil.json': {} }), 400, /'\.\.' segment/],
        ['a drive letter', plus({ 'C:/evil.json': {} }), 400, /drive letter/],
        ['no agent file', without(agentFile), 400, /no agent file/],
        [
          'two agent files',
          plus({ '0123456789abcdef01234567.agent.json': { packages: [] } }),
          400,
          /more than one agent file/,
        ],
        [
          'invalid JSON',
          plus({ [agentFile]: '{"packages": [' }),
          400,
          new RegExp(`${agentFile}: the file is not valid JSON`),
        ],
        [
          'a body failing validation',
          plus({ [dictionaryFile]: { words: [], wordz: [] } }),
          400,
          /Unknown field 'wordz' at \$\.wordz/,
          dictionaryFile,
        ],
        ['a dangling reference', without(dictionaryFile), 400, /not in the ZIP/],
        ['an unknown strategy', zip, 400, /strategy/],
        ['a wrong content type', zip, 415, /content type/i],
      ];
      const before = await storeSnapshot(freshApi);
      for (const [label, body, status, detail, file] of cases) {
        const query = label === 'an unknown strategy' ? '?strategy=overwrite' : '?strategy=merge';
        const type = label === 'a wrong content type' ? 'text/plain' : 'application/zip';
        const bytes = typeof body === 'string' ? strToU8(body) : body;
        for (const path of ['/backup/import', '/backup/import/preview']) {
          const answer = await importZip(fresh.url, bytes, query, path, type);
          assert.equal(answer.status, status, `${label} (${path}): ${answer.text}`);
          assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/, label);
          assert.match(answer.json.detail, detail, label);
          if (file) assert.equal(answer.json.file, file, label);
        }
      }
      const failing = await importZip(fresh.url, plus({ [dictionaryFile]: { words: [], wordz: [] } }));
      assert.equal(failing.json.path, '$.wordz');
      assert.deepEqual(await storeSnapshot(freshApi), before);
    });

    it('imports an upstream 6.x ZIP (weather agent, Appendix C.3): migrated, deployable and answering', async (t) => {
      for (const options of [{}, { workflowSuffix: 'package' as const, rootFolder: 'weather_agent_v1/' }]) {
        const imported = await importZip(fresh.url, weatherAgentZip(options));
        assert.equal(imported.status, 201, imported.text);
        assert.equal(imported.json.agent.originId, WEATHER_IDS.agent);
        assert.equal(imported.json.agent.name, 'Weather Agent');
        const byKind = Object.fromEntries(
          imported.json.resources.map((r: { kind: string; targetId: string }) => [r.kind, r.targetId]),
        );
        const http = (await freshApi.get(`/httpcallsstore/httpcalls/${byKind.httpcalls}?version=1`)).json;
        assert.equal(http.httpCalls[0].request.queryParams.q, '{memory.current.input}', 'Thymeleaf is rewritten');
        assert.equal(
          http.httpCalls[0].request.headers['X-Api-Key'],
          '${vault:openweathermap}',
          'legacy vault syntax is normalised',
        );
        const output = (await freshApi.get(`/outputstore/outputsets/${byKind.output}?version=1`)).json;
        assert.equal(output.language, 'en');
        assert.equal(
          output.outputSet[1].outputs[0].valueAlternatives[0].text,
          'The weather in {properties.chosenCity} is fine.',
        );
        const workflow = (await freshApi.get(`/packagestore/packages/${byKind.workflow}?version=1`)).json;
        assert.equal(workflow.packageExtensions[1].type, 'svc://ai.svc.behavior');
        assert.equal(
          workflow.packageExtensions[1].config.uri,
          `svc://ai.svc.behavior/behaviorstore/behaviorsets/${byKind.behavior}?version=1`,
        );
        assert.equal(
          (await freshApi.get(`/descriptorstore/descriptors/${byKind.dictionary}`)).json.originId,
          WEATHER_IDS.dictionary,
        );

        const agentId = await deployForConversation(freshApi, t, imported.json.agentId, 1);
        const started = await freshApi.post(`/agents/${agentId}/start`);
        assert.equal(started.status, 201, started.text);
        const conversationId = started.json.conversationId;
        const asked = await freshApi.post(`/agents/${conversationId}`, { json: { input: 'weather' } });
        assert.deepEqual(asked.json.conversationOutputs[0].actions, ['ask_for_city']);
        assert.deepEqual(asked.json.conversationOutputs[0].output, [
          'Which city would you like to know the weather of?',
        ]);
        const answered = await freshApi.post(`/agents/${conversationId}`, { json: { input: 'Vienna' } });
        assert.deepEqual(answered.json.conversationOutputs[0].actions, ['current_weather_in_city']);
        assert.deepEqual(answered.json.conversationOutputs[0].output, ['The weather in Vienna is fine.']);
        assert.deepEqual(answered.json.conversationProperties.chosenCity, {
          name: 'chosenCity',
          value: 'Vienna',
          scope: 'conversation',
        });
      }
    });

    it('imports upstream ZIPs whose ids are UUIDs (upstream on PostgreSQL)', async () => {
      const files = weatherAgentFiles();
      const uuid = '3f2b8c1e-9d4a-4f6b-8e2c-7a1d5b9c0e4f';
      const renamed = JSON.parse(JSON.stringify(files).replaceAll(WEATHER_IDS.dictionary, uuid));
      const moved = Object.fromEntries(
        Object.entries(renamed).map(([name, value]) => [name.replace(WEATHER_IDS.dictionary, uuid), value]),
      );
      const imported = await importZip(fresh.url, zipFiles(moved));
      assert.equal(imported.status, 201, imported.text);
      const dictionaryEntry = imported.json.resources.find((r: { kind: string }) => r.kind === 'dictionary');
      assert.equal(dictionaryEntry.originId, uuid);
      assert.equal(
        (await freshApi.get(`/descriptorstore/descriptors/${dictionaryEntry.targetId}`)).json.originId,
        uuid,
      );
    });
  });
}
