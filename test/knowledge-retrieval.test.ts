import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  chatRules,
  createAgent,
  createResource,
  deploy,
  idFromLocation,
  sendMessage,
  startConversation,
} from './support/agents.ts';
import {
  sentConversation,
  startFakeEmbeddings,
  startFakeOpenAi,
  type FakeEmbeddings,
  type FakeProvider,
} from './support/fake-llm/index.ts';
import type { client } from './support/http.ts';
import { pdfWithText } from './support/pdf.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';
import { ingestionDone, knowledgeBaseBody, startSearchApi, type SearchApi } from './support/knowledge.ts';

/**
 * Retrieval in the LLM task on both stores: an agent whose workflow binds a knowledge base answers from an
 * ingested PDF with a citation (the chunks and their sources in the system message and in the step data), the
 * agent-mode tool, retrieval through an HTTP call (httpCallRag), and the deployment errors of a wrong binding.
 */

type Api = ReturnType<typeof client>;

function stepData(conversation: any, key: string): any {
  return conversation.conversationSteps.at(-1).conversationStep.find((entry: { key: string }) => entry.key === key)
    ?.value;
}

/** A model that cites the first source named in the system message it was sent. */
function citingModel(request: { body: any }) {
  const system = String(request.body?.messages?.find((m: { role: string }) => m.role === 'system')?.content ?? '');
  const source = /\(source: ([^,]+),/.exec(system)?.[1];
  return { text: source ? `Returns are accepted within 30 days [source: ${source}].` : 'I do not know.' };
}

async function ragAgent(
  api: Api,
  fake: FakeProvider,
  task: Record<string, unknown>,
  knowledgeBaseUris: readonly string[],
  more: unknown[] = [],
): Promise<string> {
  const llmUri = await createResource(api, '/langchainstore/langchains', {
    tasks: [
      {
        id: 'answer',
        type: 'openai',
        actions: ['chat'],
        retry: { maxAttempts: 1 },
        parameters: {
          apiKey: 'sk-chat',
          baseUrl: `${fake.url}/v1`,
          systemMessage: 'Answer from the context and cite the source.',
          addToOutput: 'true',
        },
        ...task,
      },
    ],
  });
  const rulesUri = await createResource(api, '/behaviorstore/behaviorsets', chatRules);
  return createAgent(api, {
    extensions: [
      { type: 'svc://ai.svc.behavior', config: { uri: rulesUri } },
      ...knowledgeBaseUris.map((uri) => ({ type: 'svc://ai.svc.rag', config: { uri } })),
      ...more,
      { type: 'svc://ai.svc.llm', config: { uri: llmUri } },
    ],
  });
}

for (const store of storeTypes) {
  describe(`retrieval in the LLM task (${store})`, () => {
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
    const block = serverOfBlock(store);
    const { api } = block;

    let kbUri = '';
    let kbId = '';
    it('answers from an ingested PDF with a citation; the sources are in the step data', async () => {
      kbUri = await createResource(api, '/ragstore/rags', knowledgeBaseBody(embeddings, { name: 'policies' }));
      kbId = idFromLocation(kbUri);
      const form = new FormData();
      form.append(
        'files',
        new Blob([pdfWithText(['Returns are accepted within 30 days of delivery.'])]),
        'returns.pdf',
      );
      form.append('files', new Blob(['The warranty lasts 24 months.'], { type: 'text/plain' }), 'warranty.txt');
      const upload = await fetch(`${serverUrl()}/ragstore/rags/${kbId}/ingest`, { method: 'POST', body: form });
      assert.equal(upload.status, 202);
      const done = await ingestionDone(api, kbId, ((await upload.json()) as { ingestionId: string }).ingestionId);
      assert.equal(done.status, 'completed', JSON.stringify(done));

      const agentId = await ragAgent(api, model, { knowledgeBases: [{ name: 'policies', maxResults: 1 }] }, [kbUri]);
      await deploy(api, agentId);
      const { conversationId } = await startConversation(api, agentId);
      model.reset();
      model.reply(citingModel);
      const answer = await sendMessage(api, conversationId, 'Within how many days are returns accepted?', {
        query: '?returnDetailed=true',
      });
      assert.deepEqual(answer.conversationOutputs.at(-1).output, [
        'Returns are accepted within 30 days [source: returns.pdf].',
      ]);
      const sent = sentConversation('openai', model.requests[0]!);
      assert.match(
        sent.system ?? '',
        /^Answer from the context and cite the source\.\n\n## Relevant Context:\n\[1\] \(source: returns\.pdf, knowledge base policies, chunk 1\)\nReturns are accepted within 30 days of delivery\./,
      );
      assert.doesNotMatch(sent.system ?? '', /warranty/, 'maxResults 1 of the task applies');
      const sources = stepData(answer, 'rag:sources:answer');
      assert.equal(sources.length, 1);
      assert.equal(sources[0].documentName, 'returns.pdf');
      assert.equal(sources[0].knowledgeBase, 'policies');
      assert.ok(sources[0].score > 0.55);
      assert.deepEqual(stepData(answer, 'rag:trace:answer')[0].retrievedCount, 1);
      assert.match(stepData(answer, 'rag:context:answer'), /returns\.pdf/);
    });

    it('offers search_knowledge_base as a tool in agent mode', async () => {
      const agentId = await ragAgent(
        api,
        model,
        {
          enableWorkflowRag: true,
          ragDefaults: { maxResults: 2 },
          enableBuiltInTools: true,
          builtInToolsWhitelist: ['calculator'],
        },
        [kbUri],
      );
      await deploy(api, agentId);
      const { conversationId } = await startConversation(api, agentId);
      model.reset();
      model.reply(
        { toolCalls: [{ name: 'search_knowledge_base', args: { query: 'how long is the warranty' } }] },
        { text: 'The warranty lasts 24 months [source: warranty.txt].' },
      );
      const answer = await sendMessage(api, conversationId, 'Warranty?', { query: '?returnDetailed=true' });
      assert.deepEqual(answer.conversationOutputs.at(-1).output, [
        'The warranty lasts 24 months [source: warranty.txt].',
      ]);
      const tools = model.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
      assert.deepEqual(tools.sort(), ['calculator', 'search_knowledge_base']);
      const toolResult = model.requests[1]!.body.messages.find((m: { role: string }) => m.role === 'tool');
      assert.match(toolResult.content, /source: warranty\.txt/);
    });

    it('retrieves through an HTTP call (httpCallRag) with the input as {userInput}', async () => {
      const callsUri = await createResource(api, '/httpcallsstore/httpcalls', {
        targetServerUrl: search.url,
        httpCalls: [
          {
            name: 'search-api',
            actions: ['never'],
            request: { method: 'GET', path: '/search', queryParams: { q: '{userInput}' } },
          },
        ],
      });
      const agentId = await ragAgent(
        api,
        model,
        { httpCallRag: 'search-api' },
        [],
        [{ type: 'svc://ai.svc.httpcalls', config: { uri: callsUri } }],
      );
      await deploy(api, agentId);
      const { conversationId } = await startConversation(api, agentId);
      model.reset();
      model.reply({ text: 'Nine to five.' });
      const asked = search.queries.length;
      const answer = await sendMessage(api, conversationId, 'opening hours', { query: '?returnDetailed=true' });
      assert.deepEqual(search.queries.slice(asked), ['opening hours']);
      const sent = sentConversation('openai', model.requests[0]!);
      assert.match(sent.system ?? '', /## Search Results:\n.*nine to five/);
      assert.equal(stepData(answer, 'rag:httpcall:trace:answer').httpCall, 'search-api');
    });

    it('does not deploy a task whose knowledge bases the workflow does not bind', async () => {
      const cases: Array<[Record<string, unknown>, string[], RegExp]> = [
        [{ knowledgeBases: [{ name: 'policies' }] }, [], /workflow binds none: add a svc:\/\/ai\.svc\.rag step/],
        [{ knowledgeBases: [{ name: 'faq' }] }, [kbUri], /knowledgeBases\[0\] names 'faq'.*bound: 'policies'/],
        [{ httpCallRag: 'missing' }, [], /httpCallRag names the HTTP call 'missing'/],
      ];
      for (const [task, uris, reason] of cases) {
        const agentId = await ragAgent(api, model, task, uris);
        const answer = await api.post(`/administration/production/deploy/${agentId}?version=1&waitForCompletion=true`);
        assert.equal(answer.json.status, 'ERROR', JSON.stringify(task));
        assert.match(answer.json.error, reason);
      }
    });

    it('exports the knowledge base with the agent and imports it again', async () => {
      const agentId = await ragAgent(api, model, { knowledgeBases: [{ name: 'policies' }] }, [kbUri]);
      const exported = await api.post(`/backup/export/${agentId}?agentVersion=1`);
      assert.equal(exported.status, 200, exported.text);
      const zip = await fetch(`${serverUrl()}${exported.headers.get('location')}`);
      const bytes = new Uint8Array(await zip.arrayBuffer());
      assert.ok(Buffer.from(bytes).includes(Buffer.from(`${kbId}.rag.json`)), 'the ZIP holds <id>.rag.json');
      const imported = await api.post('/backup/import?strategy=create', {
        body: bytes,
        headers: { 'content-type': 'application/zip' },
      });
      assert.equal(imported.status, 201, imported.text);
      assert.ok(
        imported.json.resources.some(
          (r: { kind: string; action: string }) => r.kind === 'rag' && r.action === 'CREATE',
        ),
      );
      const descriptors = (await api.get('/ragstore/rags/descriptors?limit=100')).json;
      assert.ok(descriptors.length >= 2, 'the import created a knowledge base');
    });

    function serverUrl(): string {
      return block.server.url;
    }
  });
}
