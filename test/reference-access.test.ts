import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { unzipSync } from 'fflate';
import { idFromLocation, welcomeOutputs } from './support/agents.ts';
import { TEST_USERS, type TestUserKey } from './support/oidc.ts';
import { storeTypes } from './support/server.ts';
import { startWorkspaceServer, type WorkspaceServer } from './support/workspaces.ts';

/**
 * References do not bypass access (issue 13, item 2): a body may reference only resources its author may use,
 * and deploying or exporting an agent needs USE on everything it references. Alice (A) keeps a private output
 * set; Bob (B, another workspace) gets 404 for it and tries to reach it through references.
 */

const B = TEST_USERS.userB.name;
const unknownId = 'ffffffffffffffffffffffff';
const outputUri = (id: string) => `svc://ai.svc.output/outputstore/outputsets/${id}?version=1`;

for (const storeType of storeTypes) {
  describe(`references need USE on what they reference, on ${storeType}`, () => {
    let workspaces: WorkspaceServer;
    const as: WorkspaceServer['as'] = (...args) => workspaces.as(...args);
    const created = async (user: TestUserKey, path: string, body: unknown): Promise<string> => {
      const answer = await as(user, 'POST', path, body);
      assert.equal(answer.status, 201, answer.text);
      return answer.headers.get('location')!;
    };
    const workflowOf = (uri: string) => ({ packageExtensions: [{ type: 'svc://ai.svc.output', config: { uri } }] });

    let privateOutputs: string;
    let privateOutputsUri: string;

    before(async () => {
      workspaces = await startWorkspaceServer(storeType);
      privateOutputsUri = await created('userA', '/outputstore/outputsets', {
        outputSet: [
          {
            action: 'CONVERSATION_START',
            timesOccurred: 0,
            outputs: [{ valueAlternatives: [{ type: 'text', text: 'secret of alice' }] }],
          },
        ],
      });
      privateOutputs = idFromLocation(privateOutputsUri);
    });
    after(async () => {
      await workspaces?.dispose();
    });

    it("a workflow may not reference A's private output set: 400 naming the reference, as for one that does not exist", async () => {
      assert.equal((await as('userB', 'GET', `/outputstore/outputsets/${privateOutputs}?version=1`)).status, 404);
      const refused = await as('userB', 'POST', '/packagestore/packages', workflowOf(outputUri(privateOutputs)));
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.json.path, '$.packageExtensions[0].config.uri');
      assert.match(refused.json.detail, /names no resource that exists for bob/);
      const dangling = await as('userB', 'POST', '/packagestore/packages', workflowOf(outputUri(unknownId)));
      assert.equal(dangling.status, 400, dangling.text);
      assert.equal(
        dangling.json.detail.replace(unknownId, '<id>'),
        refused.json.detail.replace(privateOutputs, '<id>'),
        'a foreign resource is answered as one that does not exist',
      );

      // Nor through an update or the agent, LLM-tool and parser references of the other kinds.
      const own = await created('userB', '/outputstore/outputsets', welcomeOutputs);
      const workflow = await created('userB', '/packagestore/packages', workflowOf(own));
      const updated = await as(
        'userB',
        'PUT',
        `/packagestore/packages/${idFromLocation(workflow)}?version=1`,
        workflowOf(outputUri(privateOutputs)),
      );
      assert.equal(updated.status, 400, updated.text);
      const workflowOfA = await created('userA', '/packagestore/packages', workflowOf(privateOutputsUri));
      const agent = await as('userB', 'POST', '/agentstore/agents', { packages: [workflowOfA] });
      assert.equal(agent.status, 400, agent.text);
      assert.equal(agent.json.path, '$.packages[0]');
      const httpCallsOfA = await created('userA', '/httpcallsstore/httpcalls', {
        targetServerUrl: 'https://example.org',
        httpCalls: [{ name: 'lookup', actions: ['lookup'], request: { method: 'GET', path: '/api' } }],
      });
      const llm = await as('userB', 'POST', '/langchainstore/langchains', {
        tasks: [
          {
            actions: ['ask'],
            id: 'assistant',
            type: 'openai',
            tools: [httpCallsOfA],
            parameters: { apiKey: 'k', modelName: 'gpt-4o-mini' },
          },
        ],
      });
      assert.equal(llm.status, 400, llm.text);
      assert.equal(llm.json.path, '$.tasks[0].tools[0]');
      const dictionaryOfA = await created('userA', '/regulardictionarystore/regulardictionaries', {
        words: [{ word: 'hello', expressions: 'greeting(hello)' }],
      });
      const parser = await as('userB', 'POST', '/packagestore/packages', {
        packageExtensions: [
          {
            type: 'svc://ai.svc.parser',
            extensions: {
              dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: dictionaryOfA } }],
            },
          },
        ],
      });
      assert.equal(parser.status, 400, parser.text);
    });

    it('with a grant, or when A publishes the output set, B may reference it', async () => {
      const granted = await as('userA', 'PUT', `/descriptorstore/descriptors/${privateOutputs}/grants`, [
        { principal: B, level: 'USE' },
      ]);
      assert.equal(granted.status, 200, granted.text);
      await created('userB', '/packagestore/packages', workflowOf(privateOutputsUri));
      await as('userA', 'PUT', `/descriptorstore/descriptors/${privateOutputs}/grants`, []);
    });

    it('deploy and export check again: after A takes the output set back, B can neither deploy nor export its agent', async () => {
      const published = await as('userA', 'PUT', `/descriptorstore/descriptors/${privateOutputs}/visibility`, {
        visibility: 'public',
      });
      assert.equal(published.status, 200, published.text);
      const workflow = await created('userB', '/packagestore/packages', workflowOf(privateOutputsUri));
      const agentId = idFromLocation(await created('userB', '/agentstore/agents', { packages: [workflow] }));
      const exported = await as('userB', 'POST', `/backup/export/${agentId}`);
      assert.equal(exported.status, 200, exported.text);

      await as('userA', 'PUT', `/descriptorstore/descriptors/${privateOutputs}/visibility`, { visibility: 'private' });
      const deployed = await as(
        'userB',
        'POST',
        `/administration/production/deploy/${agentId}?version=1&waitForCompletion=true`,
      );
      assert.equal(deployed.status, 409, deployed.text);
      assert.match(deployed.json.detail, /which does not exist; the agent cannot be deployed/);
      assert.equal((await as('userB', 'POST', `/agents/${agentId}/start`)).status, 404, 'never deployed');
      const refused = await as('userB', 'POST', `/backup/export/${agentId}`);
      assert.equal(refused.status, 409, refused.text);
      assert.match(refused.json.detail, /which does not exist; the agent cannot be exported/);
      const download = await as('userB', 'GET', exported.headers.get('location')!);
      assert.equal(download.status, 409, download.text);

      // The owner of the output set still deploys and exports an agent using it, and the ZIP holds it.
      const agentOfA = idFromLocation(
        await created('userA', '/agentstore/agents', {
          packages: [await created('userA', '/packagestore/packages', workflowOf(privateOutputsUri))],
        }),
      );
      const ownDeploy = await as(
        'userA',
        'POST',
        `/administration/production/deploy/${agentOfA}?version=1&waitForCompletion=true`,
      );
      assert.equal(ownDeploy.status, 200, ownDeploy.text);
      const ownExport = await as('userA', 'POST', `/backup/export/${agentOfA}`);
      assert.equal(ownExport.status, 200, ownExport.text);
      const zip = await fetch(workspaces.server.url + ownExport.headers.get('location'), {
        headers: { authorization: `Bearer ${workspaces.token('userA')}` },
      });
      assert.equal(zip.status, 200);
      const files = Object.keys(unzipSync(new Uint8Array(await zip.arrayBuffer())));
      assert.ok(
        files.some((file) => file.includes(privateOutputs)),
        files.join(', '),
      );
    });
  });
}
