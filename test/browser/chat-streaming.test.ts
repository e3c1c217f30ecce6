import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createAgent, deploy } from '../support/agents.ts';
import { launchBrowser, screenshots, watchConsole, WIDE } from '../support/browser.ts';
import { startFakeOpenAi, type FakeProvider } from '../support/fake-llm/index.ts';
import { client } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** The manager's chat follows a turn as server-sent events, so an LLM answer arrives token by token. */
describe('web manager chat with a streaming LLM agent', { timeout: 120_000 }, () => {
  let server: TestServer;
  let fake: FakeProvider;
  let browser: Browser;
  let page: Page;
  const api = client(() => server.url);

  before(async () => {
    server = await startTestServer('sqlite');
    fake = await startFakeOpenAi();
    const create = async (path: string, body: unknown) =>
      (await api.post(path, { json: body })).headers.get('location')!;
    const rules = await create('/behaviorstore/behaviorsets', {
      behaviorGroups: [
        {
          name: 'Chat',
          behaviorRules: [
            {
              name: 'Chat',
              actions: ['chat'],
              conditions: [
                {
                  type: 'negation',
                  conditions: [{ type: 'actionmatcher', configs: { actions: 'CONVERSATION_START' } }],
                },
              ],
            },
          ],
        },
      ],
    });
    const llm = await create('/langchainstore/langchains', {
      tasks: [
        {
          id: 'chat',
          type: 'openai',
          actions: ['chat'],
          retry: { maxAttempts: 1 },
          parameters: {
            apiKey: 'sk-browser-test',
            baseUrl: `${fake.url}/v1`,
            modelName: 'gpt-4o-mini',
            addToOutput: 'true',
          },
        },
      ],
    });
    const agentId = await createAgent(api, {
      outputSet: {
        outputSet: [
          {
            action: 'CONVERSATION_START',
            timesOccurred: 0,
            outputs: [{ valueAlternatives: [{ type: 'text', text: 'Ask me anything.' }] }],
          },
        ],
      },
      extensions: [
        { type: 'svc://ai.svc.behavior', config: { uri: rules } },
        { type: 'svc://ai.svc.llm', config: { uri: llm } },
      ],
    });
    await api.patch(`/descriptorstore/descriptors/${agentId}`, {
      json: { operation: 'SET', document: { name: 'Streaming helper' } },
    });
    await deploy(api, agentId);
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: WIDE })).newPage();
    page.setDefaultTimeout(10_000);
  });
  after(async () => {
    await browser?.close();
    await fake?.close();
    await server?.dispose();
  });

  it('sends through the streaming endpoint and shows the streamed answer', async () => {
    const consoleErrors = watchConsole(page);
    const streamed: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && /\/agents\/[0-9a-f]{24}\/stream/.test(request.url()))
        streamed.push(request.url());
    });
    await page.goto(`${server.url}/manager/chat`);
    await page.getByRole('main').getByRole('button', { name: 'Start conversation' }).click();
    await page.getByRole('main').locator('.bubble.agent', { hasText: 'Ask me anything.' }).waitFor();
    fake.reply({ text: 'Streaming answers arrive piece by piece.' });
    await page.getByRole('textbox', { name: 'Message' }).fill('How do answers arrive?');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await page
      .getByRole('main')
      .locator('.bubble.agent', { hasText: 'Streaming answers arrive piece by piece.' })
      .waitFor();
    assert.equal(streamed.length, 1, 'the message went to POST /agents/<id>/stream');
    assert.equal(fake.requests.at(-1)!.body.stream, true, 'the provider was asked to stream');
    await screenshots(page, '16-chat-streaming');
    assert.deepEqual(consoleErrors.take(), []);
  });

  it('shows why a turn failed with the failed turn', async () => {
    const consoleErrors = watchConsole(page);
    fake.reply({ status: 500, message: 'the model is overloaded' });
    await page.getByRole('textbox', { name: 'Message' }).fill('Are you there?');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    const failed = page.getByRole('main').locator('.turn', { hasText: 'Are you there?' }).locator('.turn-error');
    await failed.waitFor();
    assert.match(
      String(await failed.textContent()),
      /This turn failed: ai\.svc\.llm: The openai model 'gpt-4o-mini' failed \(status 500\) after 1 attempt/,
    );
    await screenshots(page, '16-chat-turn-failed');
    assert.deepEqual(consoleErrors.take(), []);
  });
});
