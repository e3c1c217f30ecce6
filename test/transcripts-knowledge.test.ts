import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  chatRules,
  createAgent,
  createResource,
  deploy,
  exportAndImportAgent,
  sendMessage,
  startConversation,
} from './support/agents.ts';
import {
  startFakeEmbeddings,
  startFakeOpenAi,
  type FakeEmbeddings,
  type FakeProvider,
} from './support/fake-llm/index.ts';
import type { client } from './support/http.ts';
import { ingestJson, knowledgeBaseBody, startSearchApi, type SearchApi } from './support/knowledge.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * Transcripts of agents that retrieve (issues 17 and 21 together), on both stores: what a knowledge-base retrieval
 * found and what an httpCallRag call answered are recorded with the step, and a replay answers both from the
 * recording, with the embedding provider, the search API and the model gone. A retrieval the recording lacks is a
 * recording mismatch; the knowledge base travels in the export beside the transcript, and the imported copy
 * replays green.
 */

type Api = ReturnType<typeof client>;

/**
 * behavior (chat on every message) -> rag step -> HTTP calls -> an LLM task retrieving from both (or, with `task`,
 * whatever `task` says besides the model).
 */
async function retrievingAgent(
  api: Api,
  model: FakeProvider,
  kbUri: string,
  searchUrl: string,
  task: Record<string, unknown> = { knowledgeBases: [{ name: 'policies', maxResults: 1 }], httpCallRag: 'search-api' },
): Promise<string> {
  const calls = await createResource(api, '/httpcallsstore/httpcalls', {
    targetServerUrl: searchUrl,
    httpCalls: [
      {
        name: 'search-api',
        actions: ['never'],
        request: { method: 'GET', path: '/search', queryParams: { q: '{userInput}' } },
      },
    ],
  });
  const llm = await createResource(api, '/langchainstore/langchains', {
    tasks: [
      {
        id: 'answer',
        type: 'openai',
        actions: ['chat'],
        retry: { maxAttempts: 1 },
        ...task,
        parameters: {
          apiKey: 'sk-chat',
          baseUrl: `${model.url}/v1`,
          systemMessage: 'Answer from the context.',
          addToOutput: 'true',
        },
      },
    ],
  });
  return createAgent(api, {
    extensions: [
      {
        type: 'svc://ai.svc.behavior',
        config: { uri: await createResource(api, '/behaviorstore/behaviorsets', chatRules) },
      },
      { type: 'svc://ai.svc.rag', config: { uri: kbUri } },
      { type: 'svc://ai.svc.httpcalls', config: { uri: calls } },
      { type: 'svc://ai.svc.llm', config: { uri: llm } },
    ],
  });
}

for (const store of storeTypes) {
  describe(`transcripts of an agent that retrieves (${store})`, () => {
    const block = serverOfBlock(store);
    const { api } = block;
    let embeddings: FakeEmbeddings;
    let model: FakeProvider;
    let search: SearchApi;
    let agentId = '';
    let transcriptId = '';
    let transcript: any;

    before(async () => {
      embeddings = await startFakeEmbeddings();
      model = await startFakeOpenAi();
      search = await startSearchApi();
      const kbUri = await createResource(api, '/ragstore/rags', knowledgeBaseBody(embeddings, { name: 'policies' }));
      const kbId = new URL(kbUri).pathname.split('/').at(-1)!;
      const ingested = await ingestJson(api, kbId, [
        { name: 'returns.txt', content: 'Returns are accepted within 30 days of delivery.' },
        { name: 'warranty.txt', content: 'The warranty lasts 24 months.' },
      ]);
      assert.equal(ingested.status, 'completed', JSON.stringify(ingested));
      agentId = await retrievingAgent(api, model, kbUri, search.url);
      await deploy(api, agentId);
      const { conversationId } = await startConversation(api, agentId);
      model.reply({ text: 'Within 30 days [source: returns.txt].' });
      const answer = await sendMessage(api, conversationId, 'Within how many days are returns accepted?');
      assert.deepEqual(answer.conversationOutputs.at(-1).output, ['Within 30 days [source: returns.txt].']);
      const recorded = await api.post(`/transcriptstore/transcripts/from-conversation/${conversationId}`);
      assert.equal(recorded.status, 201, recorded.text);
      transcriptId = new URL(recorded.headers.get('location')!).pathname.split('/').at(-1)!;
      transcript = (await api.get(`/transcriptstore/transcripts/${transcriptId}?version=1`)).json;
    });
    after(async () => {
      await embeddings.close();
      await model.close();
      await search.close();
    });

    const run = (id: string) =>
      api.post(`/transcriptstore/transcripts/${id}/runs`, { json: { agentId, agentVersion: 1 } });

    it('records what the retrieval found and what the httpCallRag call answered with the step', () => {
      const { recordings } = transcript.turns[0];
      assert.equal(recordings.retrieval.length, 1);
      const [retrieval] = recordings.retrieval;
      assert.equal(retrieval.task, 'answer');
      assert.deepEqual(
        retrieval.sources.map((source: { knowledgeBase: string; documentName: string }) => [
          source.knowledgeBase,
          source.documentName,
        ]),
        [['policies', 'returns.txt']],
      );
      assert.match(retrieval.sources[0].text, /30 days/);
      assert.deepEqual(
        recordings.httpCalls.map((call: { name: string; request: { uri: string } }) => [call.name, call.request.uri]),
        [['search-api', `${search.url}/search?q=Within+how+many+days+are+returns+accepted%3F`]],
      );
      assert.deepEqual(recordings.llm, [{ task: 'answer', answer: 'Within 30 days [source: returns.txt].' }]);
    });

    it('replays green with the embedding provider, the search API and the model gone', async () => {
      const embedded = embeddings.requests.length;
      const searched = search.queries.length;
      await embeddings.close();
      await search.close();
      await model.close();
      const answer = await run(transcriptId);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.json.passed, true, JSON.stringify(answer.json, null, 2));
      assert.equal(embeddings.requests.length, embedded, 'no query was embedded');
      assert.equal(search.queries.length, searched, 'the search API was not asked');
    });

    it('exports the knowledge base beside the transcript; the imported copy replays green', async () => {
      const { entries, imported: result } = await exportAndImportAgent(api, block.server.url, agentId);
      assert.ok(
        entries.some((entry) => entry.endsWith('.rag.json')),
        entries.join(', '),
      );
      assert.ok(
        entries.some((entry) => entry.endsWith(`${transcriptId}.transcript.json`)),
        entries.join(', '),
      );
      assert.ok(result.resources.some((resource: { kind: string }) => resource.kind === 'rag'));
      const copy = result.resources.find((resource: { kind: string }) => resource.kind === 'transcript');
      const replayed = await api.post(`/transcriptstore/transcripts/${copy.targetId}/runs`, {
        json: { agentId: result.agentId, agentVersion: result.agentVersion },
      });
      assert.equal(replayed.json.passed, true, replayed.text);
    });

    it('fails the step whose recording lacks the retrieval, naming it', async () => {
      const { retrieval: _left, ...recordings } = transcript.turns[0].recordings;
      const edited = { ...transcript, turns: [{ ...transcript.turns[0], recordings }] };
      const written = await api.put(`/transcriptstore/transcripts/${transcriptId}?version=1`, { json: edited });
      assert.equal(written.status, 200, written.text);
      const answer = await api.post(`/transcriptstore/transcripts/${transcriptId}/runs?version=2`, {
        json: { agentId, agentVersion: 1 },
      });
      const result = answer.json;
      assert.equal(result.passed, false, answer.text);
      const step = result.steps.find((entry: { step: number }) => entry.step === 1);
      assert.match(
        JSON.stringify(step),
        /recording mismatch: the knowledge-base retrieval of LLM task 'answer' is not in the recording of this step/,
      );
    });

    it('refuses a recorded retrieval that does not fit (400 naming the field)', async () => {
      const bad = {
        ...transcript,
        turns: [{ ...transcript.turns[0], recordings: { retrieval: [{ task: 'answer', sources: [{ text: 1 }] }] } }],
      };
      const answer = await api.post('/transcriptstore/transcripts', { json: bad });
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.text, /retrieval/);
    });
  });
}

describe('a retrieving LLM task whose tool call waited for approval (sqlite)', () => {
  const { api } = serverOfBlock('sqlite');
  let embeddings: FakeEmbeddings;
  let model: FakeProvider;
  let search: SearchApi;
  before(async () => {
    embeddings = await startFakeEmbeddings();
    model = await startFakeOpenAi();
    search = await startSearchApi();
  });
  after(async () => {
    await embeddings.close();
    await model.close();
    await search.close();
  });

  it('retrieves once for the turn, goes on with that context after the approval, and replays green with the LLM live', async () => {
    const kbUri = await createResource(api, '/ragstore/rags', knowledgeBaseBody(embeddings, { name: 'policies' }));
    const kbId = new URL(kbUri).pathname.split('/').at(-1)!;
    await ingestJson(api, kbId, [{ name: 'prices.txt', content: 'A box of screws costs 6 euros.' }]);
    const agentId = await retrievingAgent(api, model, kbUri, search.url, {
      knowledgeBases: [{ name: 'policies' }],
      enableBuiltInTools: true,
      builtInToolsWhitelist: ['calculator'],
      toolApprovals: ['calculator'],
    });
    await deploy(api, agentId);
    const question = 'What do 7 boxes of screws cost?';
    const { conversationId } = await startConversation(api, agentId);
    const embeddedBefore = embeddings.requests.length;
    model.reset();
    model.reply({ toolCalls: [{ id: 'call_a', name: 'calculator', args: { expression: '6 * 7' } }] });
    const waiting = await sendMessage(api, conversationId, question);
    assert.equal(waiting.hitlPauseType, 'tool-approval');
    model.reply({ text: 'They cost 42 euros [source: prices.txt].' });
    const resumed = await api.post(`/agents/${conversationId}/resume`, { json: { decision: 'approve' } });
    assert.equal(resumed.status, 200, resumed.text);
    const embeddedQueries = embeddings.requests
      .slice(embeddedBefore)
      .filter((request) => request.input[0] === question);
    assert.equal(embeddedQueries.length, 1, 'the query was embedded once, not again on resuming');
    const resumedSystem = String(
      model.requests[1]!.body.messages.find((message: { role: string }) => message.role === 'system')?.content,
    );
    assert.match(resumedSystem, /## Relevant Context:\n\[1\] \(source: prices\.txt/);

    const created = await api.post(`/transcriptstore/transcripts/from-conversation/${conversationId}`);
    assert.equal(created.status, 201, created.text);
    const transcriptId = new URL(created.headers.get('location')!).pathname.split('/').at(-1)!;
    const transcript = (await api.get(`/transcriptstore/transcripts/${transcriptId}?version=1`)).json;
    assert.equal(transcript.turns[0].recordings.retrieval.length, 1);
    const embeddedBeforeReplay = embeddings.requests.length;
    model.reply({ toolCalls: [{ id: 'call_b', name: 'calculator', args: { expression: '6 * 7' } }] });
    model.reply({ text: 'They cost 42 euros [source: prices.txt].' });
    const run = await api.post(`/transcriptstore/transcripts/${transcriptId}/runs`, {
      json: { agentId, agentVersion: 1, mode: 'live-llm' },
    });
    assert.equal(run.json.passed, true, JSON.stringify(run.json, null, 2));
    assert.equal(embeddings.requests.length, embeddedBeforeReplay, 'the replay embedded nothing');
  });
});
