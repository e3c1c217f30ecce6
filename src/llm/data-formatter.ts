import { ToolFailure } from './tool-definitions.ts';

/** JSON pretty-printing and CSV-to-table formatting for the `dataformatter` tool. */

export function formatJson(data: string): string {
  try {
    return JSON.stringify(JSON.parse(data), null, 2);
  } catch (error) {
    throw new ToolFailure(`The data is not valid JSON: ${(error as Error).message}`);
  }
}

/** Parses CSV (comma or semicolon, double quotes with "" escapes) into rows of cells. */
export function parseCsv(data: string): string[][] {
  const firstLine = data.split(/\r?\n/, 1)[0] ?? '';
  const separator = (firstLine.match(/;/g)?.length ?? 0) > (firstLine.match(/,/g)?.length ?? 0) ? ';' : ',';
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < data.length; i++) {
    const char = data[i]!;
    if (quoted) {
      if (char === '"' && data[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === separator) {
      row.push(cell.trim());
      cell = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && data[i + 1] === '\n') i++;
      row.push(cell.trim());
      if (row.some((value) => value !== '')) rows.push(row);
      row = [];
      cell = '';
    } else cell += char;
  }
  if (quoted) throw new ToolFailure('The CSV data has an unclosed quote.');
  row.push(cell.trim());
  if (row.some((value) => value !== '')) rows.push(row);
  return rows;
}

export function formatCsv(data: string): string {
  const rows = parseCsv(data);
  if (rows.length === 0) throw new ToolFailure('The CSV data is empty.');
  const columns = Math.max(...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, c) => Math.max(3, ...rows.map((row) => (row[c] ?? '').length)));
  const line = (row: string[]) => `| ${widths.map((width, c) => (row[c] ?? '').padEnd(width)).join(' | ')} |`;
  const [header, ...body] = rows;
  return [line(header!), `| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`, ...body.map(line)].join('\n');
}
