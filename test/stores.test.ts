import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  agentExample,
  behaviorExample,
  dictionaryExample,
  kindExamples,
  workflowExample,
} from './fixtures/resources.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

const REFERENCE = /^svc:\/\/ai\.svc\.([a-z]+)(\/[a-z]+\/[a-z]+)\/([0-9a-f]{24})\?version=(\d+)$/;

function parseLocation(location: string | null) {
  const match = REFERENCE.exec(location ?? '');
  assert.ok(match, `Location ${location} is a svc:// reference`);
  return { uriType: match[1]!, storePath: match[2]!, id: match[3]!, version: Number(match[4]) };
}

function assertProblem(
  answer: { status: number; headers: Headers; json: any },
  status: number,
  detailPattern?: RegExp,
) {
  assert.equal(answer.status, status, JSON.stringify(answer.json));
  assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(answer.json.status, status);
  assert.equal(typeof answer.json.title, 'string');
  assert.equal(typeof answer.json.type, 'string');
  assert.equal(typeof answer.json.detail, 'string');
  if (detailPattern) assert.match(answer.json.detail, detailPattern);
}

for (const storeType of storeTypes) {
  describe(`configuration stores on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;

    for (const example of kindExamples) {
      it(`${example.storePath}: create, read, update, versions, current version, delete`, async () => {
        const created = await api.post(example.storePath, { json: example.body });
        assert.equal(created.status, 201, created.text);
        assert.equal(created.text, '');
        const ref = parseLocation(created.headers.get('location'));
        assert.deepEqual([ref.uriType, ref.storePath, ref.version], [example.uriType, example.storePath, 1]);

        const read = await api.get(`${example.storePath}/${ref.id}?version=1`);
        assert.equal(read.status, 200);
        assert.match(read.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual(read.json, example.body);

        const changed = { ...example.body };
        const updated = await api.put(`${example.storePath}/${ref.id}?version=1`, { json: changed });
        assert.equal(updated.status, 200, updated.text);
        assert.equal(parseLocation(updated.headers.get('location')).version, 2);

        const stale = await api.put(`${example.storePath}/${ref.id}?version=1`, { json: changed });
        assertProblem(stale, 409, /not the current version \(2\)/);

        assert.equal(
          (await api.get(`${example.storePath}/${ref.id}?version=1`)).status,
          200,
          'old versions stay readable',
        );
        const current = await api.get(`${example.storePath}/${ref.id}/currentversion`);
        assert.equal(current.status, 200);
        assert.match(current.headers.get('content-type') ?? '', /^text\/plain/);
        assert.equal(current.text, '2');

        const redirect = await api.post(`${example.storePath}/${ref.id}/currentversion`);
        assert.equal(redirect.status, 303);
        assert.equal(redirect.headers.get('location'), `${example.storePath}/${ref.id}?version=2`);

        const staleDelete = await api.delete(`${example.storePath}/${ref.id}?version=1`);
        assertProblem(staleDelete, 409);
        const deleted = await api.delete(`${example.storePath}/${ref.id}?version=2`);
        assert.equal(deleted.status, 200);
        assertProblem(await api.get(`${example.storePath}/${ref.id}?version=2`), 404);
        assert.equal(
          (await api.get(`${example.storePath}/${ref.id}?version=1`)).status,
          200,
          'older versions survive a soft delete',
        );
        assertProblem(await api.get(`${example.storePath}/${ref.id}/currentversion`), 404);
        assertProblem(await api.put(`${example.storePath}/${ref.id}?version=2`, { json: changed }), 404);

        const purged = await api.delete(`${example.storePath}/${ref.id}?permanent=true`);
        assert.equal(purged.status, 200);
        assertProblem(await api.get(`${example.storePath}/${ref.id}?version=1`), 404);
      });
    }

    it('unknown ids and versions answer 404; malformed ids and versions answer 400', async () => {
      const path = '/behaviorstore/behaviorsets';
      assertProblem(await api.get(`${path}/000000000000000000000000?version=1`), 404);
      const { id } = parseLocation((await api.post(path, { json: behaviorExample })).headers.get('location'));
      assertProblem(await api.get(`${path}/${id}?version=7`), 404);
      assertProblem(await api.get(`${path}/not-an-id?version=1`), 400, /not a resource id/);
      assertProblem(await api.get(`${path}/${id}?version=abc`), 400, /version/);
      assertProblem(await api.get(`${path}/${id}`), 400, /version/);
      assertProblem(await api.get(`${path}/${id}?version=0`), 400);
      assertProblem(await api.put(`${path}/000000000000000000000000?version=1`, { json: behaviorExample }), 404);
      assertProblem(await api.delete(`${path}/${id}`), 400, /version/);
      assertProblem(await api.get('/agentstore/no/such/route'), 404);
    });

    it('an unknown field at any depth answers 400 naming the field and its JSON path', async () => {
      const nested = structuredClone(workflowExample) as any;
      nested.packageExtensions[1].config.surprise = true;
      const answer = await api.post('/packagestore/packages', { json: nested });
      assertProblem(answer, 400, /surprise/);
      assert.equal(answer.json.field, 'surprise');
      assert.equal(answer.json.path, '$.packageExtensions[1].config.surprise');

      const topLevel = await api.post('/regulardictionarystore/regulardictionaries', {
        json: { ...dictionaryExample, colour: 'red' },
      });
      assertProblem(topLevel, 400, /colour/);
      assert.equal(topLevel.json.path, '$.colour');

      const rule = structuredClone(behaviorExample) as any;
      rule.behaviorGroups[0].behaviorRules[1].extra = 1;
      const deep = await api.post('/behaviorstore/behaviorsets', { json: rule });
      assert.equal(deep.json.path, '$.behaviorGroups[0].behaviorRules[1].extra');
    });

    it('a comment, broken JSON, a wrong content type and an oversized body are refused with 4xx', async () => {
      const withComment = '{ "words": [] /* a comment */ }';
      assertProblem(
        await api.post('/regulardictionarystore/regulardictionaries', {
          body: withComment,
          headers: { 'content-type': 'application/json' },
        }),
        400,
        /JSON/,
      );
      assertProblem(
        await api.post('/regulardictionarystore/regulardictionaries', {
          body: '{"words": [',
          headers: { 'content-type': 'application/json' },
        }),
        400,
      );
      assertProblem(
        await api.post('/regulardictionarystore/regulardictionaries', {
          body: '',
          headers: { 'content-type': 'application/json' },
        }),
        400,
      );
      assertProblem(
        await api.post('/regulardictionarystore/regulardictionaries', {
          body: 'words',
          headers: { 'content-type': 'text/plain' },
        }),
        415,
      );
      assertProblem(
        await api.post('/regulardictionarystore/regulardictionaries', {
          body: '<a/>',
          headers: { 'content-type': 'application/xml' },
        }),
        415,
      );
      assertProblem(
        await api.post('/regulardictionarystore/regulardictionaries', { json: [1, 2] }),
        400,
        /JSON object/,
      );
      assertProblem(
        await api.post('/regulardictionarystore/regulardictionaries', { json: { words: 'hello' } }),
        400,
        /\$\.words/,
      );
      const huge = JSON.stringify({ words: [{ word: 'x'.repeat(27 * 1024 * 1024) }] });
      assertProblem(
        await api.post('/regulardictionarystore/regulardictionaries', {
          body: huge,
          headers: { 'content-type': 'application/json' },
        }),
        413,
      );
      const after = await api.get('/q/health/live');
      assert.equal(after.status, 200, 'the server keeps serving');
    });

    it('upstream 6.x store paths and field names are accepted and answered in the spec names', async () => {
      const dictionary = await api.post('/dictionarystore/dictionaries', {
        json: { lang: 'en', words: [{ word: 'hi', exp: 'greeting(hi)' }] },
      });
      assert.equal(dictionary.status, 201, dictionary.text);
      const dictionaryRef = parseLocation(dictionary.headers.get('location'));
      assert.equal(dictionaryRef.uriType, 'regulardictionary');
      const storedDictionary = await api.get(`/dictionarystore/dictionaries/${dictionaryRef.id}?version=1`);
      assert.deepEqual(storedDictionary.json, { language: 'en', words: [{ word: 'hi', expressions: 'greeting(hi)' }] });

      const rules = await api.post('/rulestore/rulesets', {
        json: { ruleGroups: [{ name: 'g', rules: [{ name: 'r', actions: ['a'], conditions: [] }] }] },
      });
      assert.equal(rules.status, 201, rules.text);
      const rulesRef = parseLocation(rules.headers.get('location'));
      assert.equal(rulesRef.storePath, '/behaviorstore/behaviorsets');
      const storedRules = await api.get(`/behaviorstore/behaviorsets/${rulesRef.id}?version=1`);
      assert.deepEqual(storedRules.json, {
        behaviorGroups: [{ name: 'g', behaviorRules: [{ name: 'r', actions: ['a'], conditions: [] }] }],
      });

      const workflow = await api.post('/workflowstore/workflows', {
        json: {
          workflowSteps: [
            {
              type: 'svc://ai.svc.rules',
              config: { uri: `svc://ai.svc.rules/rulestore/rulesets/${rulesRef.id}?version=1` },
            },
          ],
        },
      });
      assert.equal(workflow.status, 201, workflow.text);
      const workflowRef = parseLocation(workflow.headers.get('location'));
      assert.equal(workflowRef.uriType, 'package');
      const storedWorkflow = await api.get(`/packagestore/packages/${workflowRef.id}?version=1`);
      assert.deepEqual(storedWorkflow.json, {
        packageExtensions: [
          {
            type: 'svc://ai.svc.behavior',
            config: { uri: `svc://ai.svc.behavior/behaviorstore/behaviorsets/${rulesRef.id}?version=1` },
          },
        ],
      });

      const agent = await api.post('/agentstore/agents', {
        json: { workflows: [`svc://ai.svc.workflow/workflowstore/workflows/${workflowRef.id}?version=1`] },
      });
      assert.equal(agent.status, 201, agent.text);
      const storedAgent = await api.get(
        `/agentstore/agents/${parseLocation(agent.headers.get('location')).id}?version=1`,
      );
      assert.deepEqual(storedAgent.json, {
        packages: [`svc://ai.svc.package/packagestore/packages/${workflowRef.id}?version=1`],
      });

      const both = await api.post('/agentstore/agents', { json: { workflows: [], packages: [] } });
      assertProblem(both, 400, /workflows/);
    });

    it('references inside workflows and agents are checked for form on write', async () => {
      assertProblem(
        await api.post('/agentstore/agents', { json: { packages: ['http://example.invalid/x'] } }),
        400,
        /packages\[0\]/,
      );
      assertProblem(
        await api.post('/agentstore/agents', {
          json: { packages: ['svc://ai.svc.package/packagestore/packages/0123456789abcdef01234567'] },
        }),
        400,
      );
      assertProblem(
        await api.post('/agentstore/agents', {
          json: { packages: ['svc://ai.svc.output/outputstore/outputsets/0123456789abcdef01234567?version=1'] },
        }),
        400,
      );
      const badUri = structuredClone(workflowExample) as any;
      badUri.packageExtensions[2].config.uri = 'svc://ai.svc.output/outputstore/outputsets/xyz?version=1';
      assertProblem(
        await api.post('/packagestore/packages', { json: badUri }),
        400,
        /packageExtensions\[2\]\.config\.uri/,
      );
      const badType = structuredClone(workflowExample) as any;
      badType.packageExtensions[3].type = 'templating';
      assertProblem(await api.post('/packagestore/packages', { json: badType }), 400, /packageExtensions\[3\]\.type/);
      assert.equal((await api.post('/agentstore/agents', { json: agentExample })).status, 201);
    });

    it('descriptors list with filter, index and limit, agents by space, and descriptor edits', async () => {
      const path = '/outputstore/outputsets';
      const ids: string[] = [];
      for (let n = 0; n < 5; n++) {
        const created = await api.post(path, { json: { outputSet: [] } });
        ids.push(parseLocation(created.headers.get('location')).id);
      }
      for (const [n, id] of ids.entries()) {
        const edit = await api.patch(`/descriptorstore/descriptors/${id}?version=1`, {
          json: {
            operation: 'SET',
            document: { name: `Reply set ${n}`, description: n % 2 === 0 ? 'even one' : 'odd one' },
          },
        });
        assert.equal(edit.status, 200, edit.text);
        assert.equal(edit.json.name, `Reply set ${n}`);
      }
      const all = await api.get(`${path}/descriptors?limit=0`);
      assert.equal(all.status, 200);
      const mine = all.json.filter((d: any) => ids.some((id) => d.resource.includes(id)));
      assert.equal(mine.length, 5);
      assert.deepEqual(
        mine.map((d: any) => d.name),
        ['Reply set 4', 'Reply set 3', 'Reply set 2', 'Reply set 1', 'Reply set 0'],
        'newest change first',
      );
      for (const descriptor of mine) {
        assert.equal(descriptor.deleted, false);
        assert.equal(typeof descriptor.createdOn, 'number');
        assert.ok(descriptor.lastModifiedOn >= descriptor.createdOn);
      }

      const filtered = await api.get(`${path}/descriptors?filter=${encodeURIComponent('REPLY SET 3')}`);
      assert.deepEqual(
        filtered.json.map((d: any) => d.name),
        ['Reply set 3'],
      );
      const byDescription = await api.get(`${path}/descriptors?filter=even`);
      assert.equal(byDescription.json.length, 3);
      const byId = await api.get(`${path}/descriptors?filter=${ids[2]}`);
      assert.deepEqual(
        byId.json.map((d: any) => d.name),
        ['Reply set 2'],
      );
      // Plain text, not a pattern (issue 13: a pattern could backtrack for minutes); quotes are still accepted.
      for (const text of ['set [1]', '"set [1]"', 'REPLY SET [13]', '([', '.*']) {
        const literal = await api.get(`${path}/descriptors?filter=${encodeURIComponent(text)}`);
        assert.equal(literal.status, 200, literal.text);
        assert.equal(literal.json.length, 0, text);
      }
      assert.deepEqual(
        (await api.get(`${path}/descriptors?filter=${encodeURIComponent('"set 1"')}`)).json.map((d: any) => d.name),
        ['Reply set 1'],
      );
      assertProblem(await api.get(`${path}/descriptors?filter=${'x'.repeat(257)}`), 400, /filter/);

      const page0 = await api.get(`${path}/descriptors?filter=Reply&limit=2&index=0`);
      const page1 = await api.get(`${path}/descriptors?filter=Reply&limit=2&index=1`);
      const page2 = await api.get(`${path}/descriptors?filter=Reply&limit=2&index=2`);
      assert.deepEqual(
        [...page0.json, ...page1.json, ...page2.json].map((d: any) => d.name),
        mine.map((d: any) => d.name),
      );
      assertProblem(await api.get(`${path}/descriptors?index=-1`), 400);
      assertProblem(await api.get(`${path}/descriptors?limit=many`), 400);

      const read = await api.get(`/descriptorstore/descriptors/${ids[0]}`);
      assert.equal(read.json.name, 'Reply set 0');
      assertProblem(
        await api.patch(`/descriptorstore/descriptors/${ids[0]}?version=9`, {
          json: { operation: 'SET', document: { name: 'x' } },
        }),
        409,
      );
      assertProblem(
        await api.patch(`/descriptorstore/descriptors/${ids[0]}`, {
          json: { operation: 'SET', document: { colour: 'x' } },
        }),
        400,
        /colour/,
      );
      assertProblem(
        await api.patch('/descriptorstore/descriptors/000000000000000000000000', {
          json: { operation: 'SET', document: { name: 'x' } },
        }),
        404,
      );

      const agents = await api.get('/agentstore/agents/descriptors?space=nowhere');
      assert.deepEqual(agents.json, []);
    });

    it('a new version moves the descriptor to the new reference', async () => {
      const created = await api.post('/propertysetterstore/propertysetters', { json: { propertyInstructions: [] } });
      const { id } = parseLocation(created.headers.get('location'));
      await api.put(`/propertysetterstore/propertysetters/${id}?version=1`, {
        json: { propertyInstructions: [{ name: 'a', fromObjectPath: 'memory.current.input', scope: 'step' }] },
      });
      const descriptor = await api.get(`/descriptorstore/descriptors/${id}`);
      assert.equal(
        descriptor.json.resource,
        `svc://ai.svc.property/propertysetterstore/propertysetters/${id}?version=2`,
      );
      const copy = await api.post(`/propertysetterstore/propertysetters/${id}?version=2`);
      assert.equal(copy.status, 201);
      const copyRef = parseLocation(copy.headers.get('location'));
      assert.notEqual(copyRef.id, id);
      assert.deepEqual(
        (await api.get(`/propertysetterstore/propertysetters/${copyRef.id}?version=1`)).json,
        (await api.get(`/propertysetterstore/propertysetters/${id}?version=2`)).json,
      );
    });

    it('a restart keeps every resource, version and descriptor byte for byte', async () => {
      const written: Array<{ path: string; text: string }> = [];
      for (const example of kindExamples) {
        const created = await api.post(example.storePath, { json: example.body });
        const { id } = parseLocation(created.headers.get('location'));
        await api.put(`${example.storePath}/${id}?version=1`, { json: example.body });
        for (const version of [1, 2]) {
          const path = `${example.storePath}/${id}?version=${version}`;
          written.push({ path, text: (await api.get(path)).text });
        }
        written.push({
          path: `/descriptorstore/descriptors/${id}`,
          text: (await api.get(`/descriptorstore/descriptors/${id}`)).text,
        });
      }
      await block.server.restart();
      for (const { path, text } of written) {
        const again = await api.get(path);
        assert.equal(again.status, 200, path);
        assert.equal(again.text, text, path);
      }
    });
  });
}
