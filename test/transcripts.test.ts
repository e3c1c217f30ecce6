import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import {
  createResource,
  deploy,
  exportAndImportAgent,
  idFromLocation,
  onEveryMessage,
  sendMessage,
  startConversation,
} from './support/agents.ts';
import { startFakeOpenAi, type FakeProvider } from './support/fake-llm/index.ts';
import type { client } from './support/http.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * Conversation regression tests (issue 21), black-box on both stores: a conversation with an HTTP call and an LLM
 * call is recorded as a transcript and replayed against versions of its agent with the network gone; runs are
 * stored, shown as JUnit XML, and a suite gates deployments.
 */

type Api = ReturnType<typeof client>;

/** A real loopback weather API: `GET /weather?q=<city>` answers JSON; every other path 404. */
async function startWeatherApi(): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '');
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== '/weather') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ city: url.searchParams.get('q'), main: { temp: 21.5 } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An LLM configuration whose task `chat` asks the OpenAI-compatible model at `url` and adds its answer to the output. */
function chatLlm(url: string, apiKey: string) {
  return {
    tasks: [
      {
        id: 'chat',
        type: 'openai',
        actions: ['chat'],
        retry: { maxAttempts: 1 },
        parameters: { apiKey, baseUrl: `${url}/v1`, modelName: 'gpt-4o-mini', addToOutput: 'true' },
      },
    ],
  };
}

interface Variant {
  /** The path of the weather call. */
  readonly path: string;
  /** The answer of the second weather lookup. */
  readonly secondAnswer: string;
}

/**
 * Every message: behavior -> HTTP call `weather` (saves the temperature) -> LLM task `chat` (adds its answer to the
 * output) -> output by the number of lookups so far. Versions of the agent share nothing but its id.
 */
async function weatherAgentBodies(api: Api, weatherUrl: string, llmUrl: string, variant: Variant) {
  const rules = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('lookup', 'chat'));
  const httpCalls = await createResource(api, '/httpcallsstore/httpcalls', {
    targetServerUrl: weatherUrl,
    httpCalls: [
      {
        name: 'weather',
        actions: ['lookup'],
        saveResponse: true,
        responseObjectName: 'weather',
        request: { method: 'get', path: variant.path, queryParams: { q: '{memory.current.input}' } },
        postResponse: {
          propertyInstructions: [{ name: 'temperature', fromObjectPath: 'weather.main.temp', scope: 'conversation' }],
        },
      },
    ],
  });
  const llm = await createResource(api, '/langchainstore/langchains', chatLlm(llmUrl, 'sk-test'));
  const output = await createResource(api, '/outputstore/outputsets', {
    outputSet: [
      {
        action: 'CONVERSATION_START',
        timesOccurred: 0,
        outputs: [{ valueAlternatives: [{ type: 'text', text: 'Welcome!' }] }],
      },
      {
        action: 'lookup',
        timesOccurred: 0,
        outputs: [{ valueAlternatives: [{ type: 'text', text: 'First lookup.' }] }],
      },
      {
        action: 'lookup',
        timesOccurred: 1,
        outputs: [{ valueAlternatives: [{ type: 'text', text: variant.secondAnswer }] }],
      },
    ],
  });
  const workflow = await createResource(api, '/packagestore/packages', {
    packageExtensions: [
      { type: 'svc://ai.svc.behavior', config: { uri: rules } },
      { type: 'svc://ai.svc.httpcalls', config: { uri: httpCalls } },
      { type: 'svc://ai.svc.llm', config: { uri: llm } },
      { type: 'svc://ai.svc.output', config: { uri: output } },
    ],
  });
  return { packages: [workflow] };
}

const original: Variant = { path: 'weather', secondAnswer: 'Second lookup.' };

for (const storeType of storeTypes) {
  describe(`transcripts on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;
    let weather: Awaited<ReturnType<typeof startWeatherApi>>;
    let model: FakeProvider;
    let agentId: string;
    let transcriptId: string;
    let conversationId: string;

    before(async () => {
      weather = await startWeatherApi();
      model = await startFakeOpenAi();
      // Version 1 answers as recorded; version 2 changes the second lookup's text; version 3 the call's path.
      const agent = await api.post('/agentstore/agents', {
        json: await weatherAgentBodies(api, weather.url, model.url, original),
      });
      assert.equal(agent.status, 201, agent.text);
      agentId = idFromLocation(agent.headers.get('location'));
      for (const [version, variant] of [
        [1, { ...original, secondAnswer: 'Second lookup, changed.' }],
        [2, { ...original, path: 'forecast' }],
      ] as const) {
        const updated = await api.put(`/agentstore/agents/${agentId}?version=${version}`, {
          json: await weatherAgentBodies(api, weather.url, model.url, variant),
        });
        assert.equal(updated.status, 200, updated.text);
      }
      await deploy(api, agentId, 1);

      const conversation = await startConversation(api, agentId);
      model.reply({ text: 'Paris is sunny.' }, { text: 'Berlin is cloudy.' });
      await sendMessage(api, conversation.conversationId, 'Paris', {
        context: { channel: { type: 'string', value: 'web' } },
      });
      await sendMessage(api, conversation.conversationId, 'Berlin');
      assert.equal(weather.requests.length, 2);
      assert.equal(model.requests.length, 2);

      conversationId = conversation.conversationId;
      const recorded = await api.post(`/transcriptstore/transcripts/from-conversation/${conversationId}`);
      assert.equal(recorded.status, 201, recorded.text);
      transcriptId = idFromLocation(recorded.headers.get('location'));
      // From here on no external call can succeed: the weather API and the model are gone.
      await weather.close();
      await model.close();
    });

    after(async () => {
      await weather?.close();
      await model?.close();
    });

    const run = (id: string, agentVersion: number, query = '', headers: Record<string, string> = {}) =>
      api.post(`/transcriptstore/transcripts/${id}/runs${query}`, { json: { agentId, agentVersion }, headers });

    it('records inputs, context, results and the answers of the HTTP call and the LLM call', async () => {
      const read = await api.get(`/transcriptstore/transcripts/${transcriptId}?version=1`);
      assert.equal(read.status, 200, read.text);
      const transcript = read.json;
      assert.equal(transcript.agentId, agentId);
      assert.deepEqual(transcript.start.expected.output, { value: ['Welcome!'], compare: 'exact' });
      assert.deepEqual(
        transcript.turns.map((turn: { input: string }) => turn.input),
        ['Paris', 'Berlin'],
      );
      const [first, second] = transcript.turns;
      assert.deepEqual(first.context, { channel: { type: 'string', value: 'web' } });
      assert.deepEqual(first.expected.output.value, ['Paris is sunny.', 'First lookup.']);
      assert.deepEqual(first.expected.properties.temperature, { value: 21.5, compare: 'exact' });
      assert.deepEqual(first.recordings.httpCalls, [
        {
          name: 'weather',
          request: { method: 'GET', uri: `${weather.url}/weather?q=Paris` },
          response: { status: 200, body: { city: 'Paris', main: { temp: 21.5 } } },
        },
      ]);
      assert.deepEqual(first.recordings.llm, [{ task: 'chat', answer: 'Paris is sunny.' }]);
      assert.deepEqual(second.recordings.llm, [{ task: 'chat', answer: 'Berlin is cloudy.' }]);
    });

    it('replays green against the same version without any network access, and cleans up its deployment', async () => {
      const answer = await run(transcriptId, 1);
      assert.equal(answer.status, 200, answer.text);
      const result = answer.json;
      assert.equal(result.passed, true, JSON.stringify(result, null, 2));
      assert.deepEqual(
        result.steps.map((step: { step: number; passed: boolean }) => [step.step, step.passed]),
        [
          [0, true],
          [1, true],
          [2, true],
        ],
      );
      const status = await api.get(`/administration/test/deploymentstatus/${agentId}?version=1`);
      assert.equal(status.json.status, 'NOT_FOUND', 'the run undeployed the version it deployed into test');
      const listed = await api.get(`/transcriptstore/transcripts/${transcriptId}/runs`);
      assert.equal(listed.status, 200);
      assert.ok(listed.json.some((entry: { id: string; passed: boolean }) => entry.id === result.id && entry.passed));
      const stored = await api.get(`/transcriptstore/transcripts/${transcriptId}/runs/${result.id}`);
      assert.deepEqual(stored.json, result);
    });

    it('fails exactly the step whose output text changed in version 2, with a diff naming the field', async () => {
      const result = (await run(transcriptId, 2)).json;
      assert.equal(result.passed, false);
      const failing = result.steps.filter((step: { passed: boolean }) => !step.passed);
      assert.deepEqual(
        failing.map((step: { step: number }) => step.step),
        [2],
      );
      const fields = failing[0].fields.filter((field: { passed: boolean }) => !field.passed);
      assert.deepEqual(
        fields.map((field: { field: string }) => field.field),
        ['output'],
      );
      assert.match(fields[0].diff, /- \[1\] "Second lookup\."/);
      assert.match(fields[0].diff, /\+ \[1\] "Second lookup, changed\."/);
    });

    it('fails a changed HTTP-call path with the recording mismatch named', async () => {
      const result = (await run(transcriptId, 3)).json;
      assert.equal(result.passed, false);
      const step = result.steps.find((entry: { step: number }) => entry.step === 1);
      assert.equal(step.passed, false);
      const mismatch = step.fields.find((field: { field: string }) => field.field === 'recordings');
      assert.ok(mismatch, JSON.stringify(step));
      assert.match(
        mismatch.diff,
        /recording mismatch: HTTP call 'weather' sent GET http:\/\/127\.0\.0\.1:\d+\/forecast\?q=Paris/,
      );
      assert.match(mismatch.diff, /the recording has GET http:\/\/127\.0\.0\.1:\d+\/weather\?q=Paris/);
    });

    it('answers the run as JUnit XML that parses', async () => {
      for (const [query, headers] of [
        ['?format=junit', {}],
        ['', { accept: 'application/xml' }],
      ] as const) {
        const answer = await run(transcriptId, 2, query, headers);
        assert.equal(answer.status, 200, answer.text);
        assert.match(answer.headers.get('content-type') ?? '', /^application\/xml/);
        assert.equal(XMLValidator.validate(answer.text), true);
        const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(answer.text);
        const suite = xml.testsuites.testsuite;
        assert.equal(suite.tests, '3');
        assert.equal(suite.failures, '1');
        const failed = suite.testcase.find((testcase: { failure?: unknown }) => testcase.failure !== undefined);
        assert.equal(failed.name, 'step 2: Berlin');
        assert.match(failed.failure['#text'], /Second lookup, changed\./);
      }
    });

    it('is exported with its agent and imported bound to the imported agent, where it replays green', async () => {
      const { entries, imported: result } = await exportAndImportAgent(api, block.server.url, agentId);
      assert.ok(entries.includes(`${transcriptId}/1/${transcriptId}.transcript.json`), entries.join(', '));
      const copy = result.resources.find((resource: { kind: string }) => resource.kind === 'transcript');
      assert.equal(copy.originId, transcriptId);
      const body = (await api.get(`/transcriptstore/transcripts/${copy.targetId}?version=1`)).json;
      assert.equal(body.agentId, result.agentId);
      assert.equal(body.agentVersion, result.agentVersion);
      const replayed = await api.post(`/transcriptstore/transcripts/${copy.targetId}/runs`, {
        json: { agentId: result.agentId, agentVersion: result.agentVersion },
      });
      assert.equal(replayed.json.passed, true, replayed.text);
    });

    it('gates a deployment with a suite: refuses a failing version with the failing steps, deploys a passing one', async () => {
      const transcriptUri = `svc://ai.svc.transcript/transcriptstore/transcripts/${transcriptId}?version=1`;
      const suiteId = idFromLocation(
        await createResource(api, '/transcriptstore/suites', { transcripts: [transcriptUri] }),
      );
      const refused = await api.post(
        `/administration/production/deploy/${agentId}?version=2&gate=${suiteId}&waitForCompletion=true`,
      );
      assert.equal(refused.status, 422, refused.text);
      assert.match(refused.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.deepEqual(
        refused.json.failures.map((failure: { transcriptId: string; step: number }) => [
          failure.transcriptId,
          failure.step,
        ]),
        [[transcriptId, 2]],
      );
      assert.equal(refused.json.failures[0].fields[0].field, 'output');
      const notDeployed = await api.get(`/administration/production/deploymentstatus/${agentId}?version=2`);
      assert.equal(notDeployed.json.status, 'NOT_FOUND');

      const accepted = await api.post(
        `/administration/test/deploy/${agentId}?version=1&gate=${suiteId}&waitForCompletion=true`,
      );
      assert.equal(accepted.status, 200, accepted.text);
      assert.equal(accepted.json.status, 'READY');
      const suiteRuns = await api.get(`/transcriptstore/suites/${suiteId}/runs`);
      assert.deepEqual(
        suiteRuns.json.map((entry: { passed: boolean }) => entry.passed),
        [true, false],
      );
      const refusedRun = await api.get(
        `/transcriptstore/suites/${suiteId}/runs/${refused.json.suiteRunId}?format=junit`,
      );
      assert.equal(refusedRun.status, 200, refusedRun.text);
      assert.equal(XMLValidator.validate(refusedRun.text), true);
      const junit = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(refusedRun.text);
      assert.equal(junit.testsuites.failures, '1');
      assert.equal(junit.testsuites.testsuite.name, `Recorded from conversation ${conversationId}`);
    });
  });
}

describe('transcripts: judge comparisons and bad input', () => {
  const { api } = serverOfBlock('sqlite');
  let agentModel: FakeProvider;
  let judgeModel: FakeProvider;
  let agentId: string;

  before(async () => {
    agentModel = await startFakeOpenAi();
    judgeModel = await startFakeOpenAi();
    const rules = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('chat'));
    const llm = await createResource(api, '/langchainstore/langchains', chatLlm(agentModel.url, 'sk-agent'));
    const workflow = await createResource(api, '/packagestore/packages', {
      packageExtensions: [
        { type: 'svc://ai.svc.behavior', config: { uri: rules } },
        { type: 'svc://ai.svc.llm', config: { uri: llm } },
      ],
    });
    agentId = idFromLocation(await createResource(api, '/agentstore/agents', { packages: [workflow] }));
  });

  after(async () => {
    await agentModel?.close();
    await judgeModel?.close();
  });

  const judged = () => ({
    judge: {
      type: 'openai',
      parameters: { apiKey: 'sk-judge', baseUrl: `${judgeModel.url}/v1`, modelName: 'gpt-4o' },
    },
    turns: [
      {
        input: 'Tell me about Paris',
        expected: { output: { compare: 'judge', rubric: 'Mentions the Eiffel Tower.' } },
      },
    ],
  });

  it('lets a judge model grade a live LLM answer against the rubric', async () => {
    const transcriptId = idFromLocation(await createResource(api, '/transcriptstore/transcripts', judged()));
    const run = () =>
      api.post(`/transcriptstore/transcripts/${transcriptId}/runs`, {
        json: { agentId, agentVersion: 1, mode: 'live-llm' },
      });

    agentModel.reply({ text: 'The Eiffel Tower is in Paris.' });
    judgeModel.reply({ text: 'PASS\nIt names the tower.' });
    const passed = await run();
    assert.equal(passed.status, 200, passed.text);
    assert.equal(passed.json.passed, true, passed.text);
    const asked = JSON.stringify(judgeModel.requests.at(-1)!.body);
    assert.match(asked, /Mentions the Eiffel Tower\./);
    assert.match(asked, /The Eiffel Tower is in Paris\./);

    agentModel.reply({ text: 'Paris is big.' });
    judgeModel.reply({ text: 'FAIL\nThe tower is not mentioned.' });
    const failed = (await run()).json;
    assert.equal(failed.passed, false);
    const field = failed.steps[1].fields.find((entry: { field: string }) => entry.field === 'output');
    assert.equal(field.passed, false);
    assert.match(field.diff, /The tower is not mentioned\./);
    assert.doesNotMatch(JSON.stringify(failed), /sk-judge|sk-agent/);
  });

  it('fails a step whose LLM call has no recording when replaying from recordings', async () => {
    const transcriptId = idFromLocation(
      await createResource(api, '/transcriptstore/transcripts', { turns: [{ input: 'Hi' }] }),
    );
    const before = agentModel.requests.length;
    const result = (
      await api.post(`/transcriptstore/transcripts/${transcriptId}/runs`, { json: { agentId, agentVersion: 1 } })
    ).json;
    assert.equal(result.passed, false);
    assert.deepEqual(result.steps[1].fields, [
      {
        field: 'recordings',
        compare: 'recording',
        passed: false,
        diff: "recording mismatch: LLM task 'chat' has no recorded answer in this step",
      },
    ]);
    assert.equal(agentModel.requests.length, before, 'the model was not asked');
  });

  it('refuses bad transcripts, suites and run requests with a 4xx problem', async () => {
    const cases: Array<[string, string, unknown, number, RegExp]> = [
      [
        'POST',
        '/transcriptstore/transcripts',
        { turns: [{ input: 'x', expected: { output: { value: '(', compare: 'regex' } } }] },
        400,
        /\$\.turns\[0\]\.expected\.output/,
      ],
      [
        'POST',
        '/transcriptstore/transcripts',
        { turns: [{ input: 'x', expected: { output: { compare: 'judge', rubric: 'r' } } }] },
        400,
        /judge model/,
      ],
      ['POST', '/transcriptstore/transcripts', { turns: [], surprise: 1 }, 400, /surprise/],
      [
        'POST',
        '/transcriptstore/transcripts',
        { turns: [{ input: 'x', context: { city: { type: 'string', value: 5 } } }] },
        400,
        /\$\.turns\[0\]\.context\.city\.value must be a text/,
      ],
      [
        'POST',
        '/transcriptstore/transcripts',
        { turns: [{ input: 'x', expected: { output: { compare: 'fuzzy' } } }] },
        400,
        /compare/,
      ],
      [
        'POST',
        '/transcriptstore/suites',
        { transcripts: [`svc://ai.svc.agent/agentstore/agents/${agentId}?version=1`] },
        400,
        /ai\.svc\.transcript/,
      ],
      ['POST', `/transcriptstore/transcripts/from-conversation/${'0'.repeat(24)}`, undefined, 404, /conversation/i],
    ];
    for (const [method, path, json, status, detail] of cases) {
      const answer = method === 'POST' ? await api.post(path, json === undefined ? {} : { json }) : await api.get(path);
      assert.equal(answer.status, status, `${path}: ${answer.text}`);
      assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.match(answer.json.detail, detail);
    }

    const transcriptId = idFromLocation(
      await createResource(api, '/transcriptstore/transcripts', { turns: [{ input: 'Hi' }] }),
    );
    const runs = `/transcriptstore/transcripts/${transcriptId}/runs`;
    for (const [json, status] of [
      [{ agentId, agentVersion: 1, mode: 'sometimes' }, 400],
      [{ agentId }, 400],
      [{ agentId, agentVersion: 9 }, 404],
      [{ agentId: '0'.repeat(24), agentVersion: 1 }, 404],
    ] as const) {
      const answer = await api.post(runs, { json });
      assert.equal(answer.status, status, answer.text);
      assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
    }
    assert.equal(
      (await api.post(`/transcriptstore/transcripts/${'0'.repeat(24)}/runs`, { json: { agentId, agentVersion: 1 } }))
        .status,
      404,
    );
    assert.equal((await api.get(`${runs}/${'0'.repeat(24)}`)).status, 404);
    const gated = await api.post(`/administration/production/deploy/${agentId}?version=1&gate=${'0'.repeat(24)}`);
    assert.equal(gated.status, 404, gated.text);
    const status = await api.get(`/administration/production/deploymentstatus/${agentId}?version=1`);
    assert.equal(status.json.status, 'NOT_FOUND', 'a gate that cannot run deploys nothing');
  });
});

describe('transcripts: an LLM task calling an HTTP call as a tool', () => {
  const { api } = serverOfBlock('sqlite');

  it('records the tool call as made by a tool, and replays green from the recorded answer alone', async () => {
    const weather = await startWeatherApi();
    const model = await startFakeOpenAi();
    try {
      const calls = await createResource(api, '/httpcallsstore/httpcalls', {
        targetServerUrl: weather.url,
        httpCalls: [
          {
            name: 'weather',
            description: 'The weather of a city',
            parameters: { city: 'the city' },
            actions: [],
            saveResponse: true,
            request: { method: 'get', path: 'weather', queryParams: { q: '{city}' } },
          },
        ],
      });
      const llmBody = chatLlm(model.url, 'sk-tools');
      const llm = await createResource(api, '/langchainstore/langchains', {
        tasks: [{ ...llmBody.tasks[0], tools: [calls] }],
      });
      const rules = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('chat'));
      const workflow = await createResource(api, '/packagestore/packages', {
        packageExtensions: [
          { type: 'svc://ai.svc.behavior', config: { uri: rules } },
          { type: 'svc://ai.svc.llm', config: { uri: llm } },
        ],
      });
      const agentId = idFromLocation(await createResource(api, '/agentstore/agents', { packages: [workflow] }));
      await deploy(api, agentId, 1);
      const conversation = await startConversation(api, agentId);
      model.reply({ toolCalls: [{ name: 'weather', args: { city: 'Paris' } }] }, { text: 'Paris: 21.5 degrees.' });
      const answer = await sendMessage(api, conversation.conversationId, 'Weather in Paris?');
      assert.deepEqual(answer.conversationOutputs.at(-1).output, ['Paris: 21.5 degrees.']);
      assert.deepEqual(weather.requests, ['/weather?q=Paris']);

      const recorded = await api.post(`/transcriptstore/transcripts/from-conversation/${conversation.conversationId}`);
      const transcriptId = idFromLocation(recorded.headers.get('location'));
      const transcript = (await api.get(`/transcriptstore/transcripts/${transcriptId}?version=1`)).json;
      assert.equal(transcript.turns[0].recordings.httpCalls[0].byTool, true);
      assert.deepEqual(transcript.turns[0].recordings.llm, [{ task: 'chat', answer: 'Paris: 21.5 degrees.' }]);

      await weather.close();
      await model.close();
      const run = await api.post(`/transcriptstore/transcripts/${transcriptId}/runs`, {
        json: { agentId, agentVersion: 1 },
      });
      assert.equal(run.json.passed, true, run.text);
    } finally {
      await weather.close();
      await model.close();
    }
  });
});
