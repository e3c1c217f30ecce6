import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { knowledgeBaseBody } from '../support/knowledge.ts';
import { createResource, idFromLocation } from '../support/agents.ts';
import { openPage, screenshots } from '../support/browser.ts';
import { startFakeEmbeddings, type FakeEmbeddings } from '../support/fake-llm/index.ts';
import { client } from '../support/http.ts';
import { pdfWithText } from '../support/pdf.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The knowledge-base screen in Debian's Chromium against the real server and a loopback embedding server: open a
 * knowledge base from the menu, upload a text file and a PDF with their progress, see the documents, search and
 * read the chunks with their scores, delete a document.
 */
describe('knowledge-base screen', { timeout: 120_000 }, () => {
  let server: TestServer;
  let embeddings: FakeEmbeddings;
  let browser: Browser;
  let page: Page;
  let consoleErrors: { take(): string[] };
  const main = () => page.getByRole('main');

  before(async () => {
    server = await startTestServer('sqlite');
    embeddings = await startFakeEmbeddings();
    ({ browser, page, consoleErrors } = await openPage());
  });
  after(async () => {
    await browser?.close();
    await embeddings?.close();
    await server?.dispose();
  });

  it('uploads documents with progress, lists them, searches them and deletes one', async () => {
    const api = client(() => server.url);
    const id = idFromLocation(await createResource(api, '/ragstore/rags', knowledgeBaseBody(embeddings)));
    await page.goto(`${server.url}/manager`);
    await page.getByRole('link', { name: 'Knowledge bases' }).click();
    await main().getByRole('heading', { name: 'Knowledge bases', level: 1 }).waitFor();
    await page.goto(`${server.url}/manager/resources/rags/${id}`);
    await main().getByRole('heading', { name: 'Documents' }).waitFor();
    await main().getByText('No documents yet.').waitFor();

    await main()
      .getByLabel('Text, Markdown, HTML or PDF files')
      .setInputFiles([
        { name: 'warranty.txt', mimeType: 'text/plain', buffer: Buffer.from('The warranty lasts 24 months.') },
        {
          name: 'returns.pdf',
          mimeType: 'application/pdf',
          buffer: Buffer.from(pdfWithText(['Returns are accepted within 30 days.'])),
        },
      ]);
    await main().getByRole('button', { name: 'Upload and ingest' }).click();
    await main().getByText('2 of 2 files').waitFor();
    assert.equal(await main().getByLabel('Files ingested').getAttribute('value'), '2');
    await main().getByRole('cell', { name: 'returns.pdf' }).waitFor();
    await main().getByRole('cell', { name: 'warranty.txt' }).waitFor();
    assert.equal(await main().getByRole('cell', { name: 'application/pdf' }).count(), 1);

    await main().getByLabel('Search', { exact: true }).fill('how long is the warranty');
    await main().getByRole('button', { name: 'Search', exact: true }).click();
    const first = main().getByRole('list', { name: 'Search results' }).getByRole('listitem').first();
    await first.waitFor();
    assert.match(
      (await first.textContent()) ?? '',
      /warranty\.txt, chunk 1, score 0\.\d{3}\s*The warranty lasts 24 months\./,
    );
    await screenshots(page, 'knowledge-base');

    await main()
      .getByRole('row', { name: /warranty\.txt/ })
      .getByRole('button', { name: 'Delete' })
      .click();
    await main().getByRole('button', { name: 'Yes' }).click();
    await main().getByRole('cell', { name: 'warranty.txt' }).waitFor({ state: 'detached' });
    assert.deepEqual(
      ((await api.get(`/ragstore/rags/${id}/documents`)).json as Array<{ name: string }>).map((d) => d.name),
      ['returns.pdf'],
    );
    assert.deepEqual(consoleErrors.take(), []);
  });
});
