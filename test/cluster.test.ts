import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent, deploy, idFromLocation, sayContext } from './support/agents.ts';
import { call, client } from './support/http.ts';
import { createTestDatabase } from './support/postgres.ts';
import { startServiceProcess, type ServiceProcess } from './support/process.ts';

/** Several service processes on one PostgreSQL database, as behind a load balancer. */
describe('several instances on one PostgreSQL', () => {
  let database: { url: string; drop(): Promise<void> };
  const instances: ServiceProcess[] = [];
  let urls: string[] = [];

  const startInstance = async () => {
    const instance = startServiceProcess({
      SVC_HTTP_PORT: '0',
      SVC_DATASTORE_TYPE: 'postgres',
      SVC_DATASTORE_POSTGRES_URL: database.url,
    });
    instances.push(instance);
    return instance.listening();
  };

  before(async () => {
    database = await createTestDatabase();
    urls = await Promise.all([startInstance(), startInstance(), startInstance()]);
  });
  after(async () => {
    await Promise.all(instances.map((instance) => instance.stop('SIGKILL')));
    await database?.drop();
  });

  it('a deployment made on one instance serves conversations on every instance within a second', async () => {
    const first = client(() => urls[0]!);
    const agentId = await createAgent(first, { outputSet: { outputSet: [] } });
    await deploy(first, agentId);
    const started = Date.now();
    for (const url of urls.slice(1)) {
      let status = '';
      while (status !== 'READY' && Date.now() - started < 1000) {
        status = (await call(url, 'GET', `/administration/production/deploymentstatus/${agentId}?version=1`)).json
          .status;
        if (status !== 'READY') await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(status, 'READY', `deployed on ${url} within a second`);
      assert.equal((await call(url, 'POST', `/agents/${agentId}/start`)).status, 201);
    }
    await first.post(`/administration/production/undeploy/${agentId}?version=1`);
    for (const url of urls.slice(1)) {
      let status = 'READY';
      while (status !== 'NOT_FOUND' && Date.now() - started < 5000) {
        status = (await call(url, 'GET', `/administration/production/deploymentstatus/${agentId}?version=1`)).json
          .status;
      }
      assert.equal(status, 'NOT_FOUND', `undeployed on ${url}`);
    }
  });

  it('200 messages to 10 conversations across all instances at once: each conversation has exactly its messages, once, in a consistent order', async () => {
    const api = client(() => urls[0]!);
    const agentId = await createAgent(api, { outputSet: { outputSet: [] } });
    await deploy(api, agentId);
    const conversations: string[] = [];
    for (let n = 0; n < 10; n++) {
      const url = urls[n % urls.length]!;
      let started = await call(url, 'POST', `/agents/${agentId}/start`);
      for (let tries = 0; started.status === 404 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        started = await call(url, 'POST', `/agents/${agentId}/start`);
      }
      assert.equal(started.status, 201, started.text);
      conversations.push(idFromLocation(started.headers.get('location')));
    }
    const sends = Array.from({ length: 200 }, (_, n) => {
      const conversationId = conversations[n % 10]!;
      const url = urls[(n * 7) % urls.length]!;
      return call(url, 'POST', `/agents/${conversationId}?returnCurrentStepOnly=false`, {
        json: { input: `m${n}`, context: sayContext(`echo m${n}`) },
      }).then((answer) => ({ n, conversationId, answer }));
    });
    const answers = await Promise.all(sends);
    for (const { answer } of answers) assert.equal(answer.status, 200, answer.text);

    for (const [index, conversationId] of conversations.entries()) {
      const final = await call(
        urls[index % urls.length]!,
        'GET',
        `/agents/${conversationId}?returnCurrentStepOnly=false`,
      );
      const outputs: Array<{ input: string; output: string[] }> = final.json.conversationOutputs.slice(1);
      const expected = answers.filter((a) => a.conversationId === conversationId).map((a) => `m${a.n}`);
      assert.deepEqual(outputs.map((o) => o.input).sort(), [...expected].sort(), 'exactly its messages, each once');
      for (const output of outputs)
        assert.deepEqual(output.output, [`echo ${output.input}`], 'no turn interleaved with another');
      const finalInputs = outputs.map((o) => o.input);
      const prefixLengths = new Set<number>();
      for (const { answer } of answers.filter((a) => a.conversationId === conversationId)) {
        const seen = answer.json.conversationOutputs.slice(1).map((o: { input: string }) => o.input);
        assert.deepEqual(seen, finalInputs.slice(0, seen.length), 'every answer saw a prefix of the final history');
        prefixLengths.add(seen.length);
      }
      assert.equal(prefixLengths.size, expected.length, 'each turn ran on its own, one after the other');
    }
  });

  it('a message retried on every instance at once with one Idempotency-Key runs once and answers the same', async () => {
    const api = client(() => urls[0]!);
    const agentId = await createAgent(api, { outputSet: { outputSet: [] } });
    await deploy(api, agentId);
    let started = await call(urls[1]!, 'POST', `/agents/${agentId}/start`);
    for (let tries = 0; started.status === 404 && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      started = await call(urls[1]!, 'POST', `/agents/${agentId}/start`);
    }
    const id = idFromLocation(started.headers.get('location'));
    const copies = await Promise.all(
      [...urls, ...urls].map((url) =>
        call(url, 'POST', `/agents/${id}`, {
          json: { input: 'once', context: sayContext('done') },
          headers: { 'idempotency-key': 'order-42' },
        }),
      ),
    );
    for (const copy of copies) {
      assert.equal(copy.status, 200, copy.text);
      assert.deepEqual(copy.json, copies[0]!.json);
    }
    const final = await call(urls[2]!, 'GET', `/agents/${id}?returnCurrentStepOnly=false`);
    assert.deepEqual(
      final.json.conversationOutputs.slice(1).map((o: { input: string }) => o.input),
      ['once'],
    );
  });
});
