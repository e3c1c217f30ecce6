import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createAgent, createResource, idFromLocation } from '../support/agents.ts';
import { openPage, screenshots } from '../support/browser.ts';
import { client } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Issue 16 in the web manager, in Debian's Chromium against the real server: the LLM configuration's forms for tools
 * and cascade steps, the agent's memory settings, and the user-memory screen (view, delete, export, erase).
 */
describe('web manager: LLM forms and user memory', { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let consoleErrors: { take(): string[] };
  let api: ReturnType<typeof client>;
  let llmId = '';
  let agentId = '';
  const main = () => page.getByRole('main');

  before(async () => {
    server = await startTestServer('sqlite');
    api = client(() => server.url);
    const llmUri = await createResource(api, '/llmstore/llms', {
      tasks: [
        {
          id: 'chat',
          type: 'openai',
          actions: ['chat'],
          parameters: { apiKey: '${vault:openai}', modelName: 'gpt-4o-mini', systemMessage: 'Be brief.' },
        },
      ],
    });
    llmId = idFromLocation(llmUri);
    agentId = await createAgent(api, { extensions: [{ type: 'svc://ai.svc.llm', config: { uri: llmUri } }] });
    for (const [key, value, visibility] of [
      ['favorite_color', 'blue', 'global'],
      ['city', 'Vienna', 'global'],
    ] as const) {
      const put = await api.put('/usermemorystore/memories', {
        json: { userId: 'alice', key, value, visibility, category: 'preference' },
      });
      assert.equal(put.status, 200, put.text);
    }
    ({ browser, page, consoleErrors } = await openPage());
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  it('the LLM configuration has forms for its tools and its model cascade steps', async () => {
    await page.goto(`${server.url}/manager/resources/llms/${llmId}`);
    const task = main().getByTestId('llm-task-form-0');
    await task.getByRole('heading', { name: 'Task chat' }).waitFor();
    await task.getByLabel('Built-in tools', { exact: true }).check();
    await task.getByLabel('calculator').check();
    await task.getByLabel('usermemory').check();
    await task.getByLabel('Agent card URL', { exact: false }).waitFor({ state: 'detached' });
    await task.getByRole('button', { name: 'Add peer agent' }).click();
    await task.getByLabel('Agent card URL 1').fill('https://peer.example/agent.json');
    await task.getByLabel("Tools of the workflow's MCP-call sets").uncheck();
    await task.getByLabel('Cascade: try cheaper models first').check();
    await task.getByLabel('Evaluation strategy').selectOption('structured_output');
    await task.getByLabel('Model of step 1').fill('gpt-4o-mini');
    await task.getByRole('button', { name: 'Add cascade step' }).click();
    await task.getByLabel('Model of step 2').fill('gpt-4o');
    await task.getByLabel('Confidence threshold of step 2').fill('0.5');
    await task.getByLabel('Cost ceiling per turn (maxCostPerRun, USD)').fill('0.05');
    await screenshots(page, 'llm-forms');
    await main().getByRole('button', { name: 'Save as new version' }).click();
    await main().getByText('Saved as version 2.').waitFor();

    const saved = (await api.get(`/llmstore/llms/${llmId}?version=2`)).json.tasks[0];
    assert.equal(saved.enableBuiltInTools, true);
    assert.deepEqual(saved.builtInToolsWhitelist, ['calculator', 'usermemory']);
    assert.equal(saved.enableMcpCallTools, false);
    assert.deepEqual(saved.a2aAgents, [{ url: 'https://peer.example/agent.json' }]);
    assert.equal(saved.modelCascade.evaluationStrategy, 'structured_output');
    assert.equal(saved.modelCascade.maxCostPerRun, 0.05);
    assert.deepEqual(
      saved.modelCascade.steps.map((s: any) => [s.type, s.parameters.modelName, s.confidenceThreshold]),
      [
        ['openai', 'gpt-4o-mini', undefined],
        ['openai', 'gpt-4o', 0.5],
      ],
    );
    assert.deepEqual(consoleErrors.take(), []);
  });

  it("the agent's memory settings have a form", async () => {
    await page.goto(`${server.url}/manager/resources/agents/${agentId}`);
    const form = main().getByTestId('agent-memory-form');
    await form.getByLabel('Memory tools (rememberFact, recallMemories, searchMemory, forgetFact)').check();
    await form.getByLabel('Writes per turn').fill('3');
    await form.getByLabel('Recall order').selectOption('most_accessed');
    await form.getByRole('group', { name: 'Visibilities the model may write' }).getByLabel('global').check();
    await main().getByRole('button', { name: 'Save as new version' }).click();
    await main().getByText('Saved as version 2.').waitFor();
    const saved = (await api.get(`/agentstore/agents/${agentId}?version=2`)).json;
    assert.equal(saved.enableMemoryTools, true);
    assert.deepEqual(saved.userMemoryConfig, {
      recallOrder: 'most_accessed',
      guardrails: { maxWritesPerTurn: 3, allowedVisibilities: ['global'] },
    });
    assert.deepEqual(consoleErrors.take(), []);
  });

  it("the user-memory screen shows a user's facts; one is deleted, the memories exported, all data erased", async () => {
    await page.goto(`${server.url}/manager`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'User memory' }).click();
    await main().getByRole('link', { name: 'alice' }).click();
    await page.waitForURL(/\/manager\/memory\/alice$/);
    const table = main().getByTestId('memory-entries');
    await table.getByRole('cell', { name: 'Vienna' }).waitFor();
    await screenshots(page, 'user-memory');

    await table.getByRole('button', { name: 'Delete city' }).click();
    await table.getByRole('button', { name: 'Yes' }).click();
    await main().getByText('Deleted city.').waitFor();
    assert.deepEqual(
      (await api.get('/usermemorystore/memories/alice')).json.map((e: any) => e.key),
      ['favorite_color'],
    );

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      main().getByRole('button', { name: 'Export memories' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'memories-alice.json');
    const exported = JSON.parse(await readFile((await download.path())!, 'utf8'));
    assert.deepEqual(
      exported.memories.map((e: any) => e.key),
      ['favorite_color'],
    );

    await main().getByRole('button', { name: 'Erase all data' }).click();
    await main().getByRole('button', { name: 'Yes' }).click();
    await main().getByText('Erased 1 memories, 0 long-term properties and 0 conversations.').waitFor();
    await main().getByText('Nothing is remembered about alice.').waitFor();
    assert.deepEqual((await api.get('/usermemorystore/memories/alice')).json, []);
    assert.deepEqual(consoleErrors.take(), []);
  });
});
