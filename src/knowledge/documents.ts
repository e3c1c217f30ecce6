import { convert } from 'html-to-text';
import { extractText as extractPdfText, getDocumentProxy } from 'unpdf';

/**
 * The text of an uploaded document: plain text and Markdown as written (UTF-8, else Windows-1252), HTML as its
 * readable text (no markup, scripts or styles), PDF page by page (pure JavaScript, no binaries). A document that
 * cannot be read, or has no text, is refused with a `DocumentError` saying why; it fails alone, not its batch.
 */

export const DOCUMENT_FORMATS = ['text', 'markdown', 'html', 'pdf'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

export class DocumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DocumentError';
  }
}

const byContentType: Readonly<Record<string, DocumentFormat>> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
};

const byExtension: Readonly<Record<string, DocumentFormat>> = {
  txt: 'text',
  text: 'text',
  log: 'text',
  csv: 'text',
  json: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  pdf: 'pdf',
};

/** The format a content type names, else the one the file name's extension names; undefined when neither does. */
export function formatOf(contentType: string | undefined, name: string): DocumentFormat | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  const named = type === undefined ? undefined : byContentType[type];
  if (named) return named;
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  return extension === undefined ? undefined : byExtension[extension];
}

/** The content type a document of a format is recorded with when its upload named none this service reads. */
export const CONTENT_TYPE_OF: Readonly<Record<DocumentFormat, string>> = {
  text: 'text/plain',
  markdown: 'text/markdown',
  html: 'text/html',
  pdf: 'application/pdf',
};

export async function documentText(bytes: Uint8Array, format: DocumentFormat): Promise<string> {
  const text = format === 'pdf' ? await pdfText(bytes) : format === 'html' ? htmlText(decode(bytes)) : decode(bytes);
  if (text.trim() === '')
    throw new DocumentError(
      format === 'pdf' ? 'The PDF has no text layer (a scan?); there is nothing to index.' : 'The document is empty.',
    );
  return text;
}

function decode(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

function htmlText(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'nav', format: 'skip' },
    ],
  });
}

async function pdfText(bytes: Uint8Array): Promise<string> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'PasswordException') throw new DocumentError('The PDF is encrypted; it cannot be read.');
    throw new DocumentError(`The file is not a readable PDF (${(error as Error).message}).`);
  }
  const { text } = await extractPdfText(pdf, { mergePages: false });
  return text.join('\n\n');
}
