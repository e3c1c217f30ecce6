import { promisify } from 'node:util';
import { crc32, inflateRaw } from 'node:zlib';
import { invalid } from '../errors.ts';

/**
 * Reads an uploaded ZIP defensively: the central directory is read first, so the entry count, every entry name
 * and every declared size are checked against the budget before anything is inflated; inflating then stops at the
 * first output chunk beyond the entry's declared size (a ZIP that lies about its sizes is refused, not believed)
 * and every entry's CRC-32 is checked. Directory entries are skipped. Nothing here touches the file system.
 *
 * Inflating runs on Node's thread pool (zlib), not on the event loop, for at most `PARALLEL_UNZIPS` archives at a
 * time (further uploads wait their turn): archives that inflate big hold up neither other requests nor much memory.
 */

export interface ZipLimits {
  /** Largest total of the unpacked entries (and of each entry). */
  readonly maxUnpackedBytes: number;
  readonly maxEntries: number;
}

/** The archive is larger than the service accepts (answered with 413). */
export class ZipTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ZipTooLargeError';
  }
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const CENTRAL_ENTRY = 0x02014b50;
const LOCAL_ENTRY = 0x04034b50;
/** Archives inflated at the same time; further uploads wait for their turn. */
const PARALLEL_UNZIPS = 2;

interface CentralEntry {
  readonly name: string;
  readonly method: number;
  readonly flags: number;
  readonly crc: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly localOffset: number;
}

const broken = (what: string) => invalid(`The upload is not a readable ZIP archive: ${what}.`, { path: 'body' });

/**
 * An entry name with `/` separators: archives made on Windows (one of the original service's own exports among
 * them) write `\`. The result is checked by `unsafeEntryName` like any other name.
 */
export function normalizedEntryName(name: string): string {
  return name.replaceAll('\\', '/');
}

/** Why a (normalised) entry name is refused, or undefined when it is a plain relative path. */
export function unsafeEntryName(name: string): string | undefined {
  if (name.length === 0) return 'it is empty';
  if (name.includes('\0')) return 'it contains a NUL character';
  if (name.startsWith('/')) return 'it is an absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'it starts with a drive letter';
  if (name.split('/').some((segment) => segment === '..')) return "it contains a '..' segment";
  return undefined;
}

function u16(data: Uint8Array, at: number): number {
  if (at + 2 > data.length) throw broken('it is truncated');
  return data[at]! | (data[at + 1]! << 8);
}

function u32(data: Uint8Array, at: number): number {
  if (at + 4 > data.length) throw broken('it is truncated');
  return (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> 0;
}

function findEndOfCentralDirectory(data: Uint8Array): number {
  const lowest = Math.max(0, data.length - 22 - 0xffff);
  for (let at = data.length - 22; at >= lowest; at--) {
    if (u32(data, at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw broken(
    data.length === 0 ? 'the body is empty' : 'no end-of-central-directory record (truncated, or not a ZIP)',
  );
}

function readCentralDirectory(data: Uint8Array, limits: ZipLimits): CentralEntry[] {
  const end = findEndOfCentralDirectory(data);
  if (end >= 20 && u32(data, end - 20) === ZIP64_LOCATOR) throw broken('ZIP64 archives are not supported');
  const count = u16(data, end + 10);
  const directorySize = u32(data, end + 12);
  const directoryOffset = u32(data, end + 16);
  if (count > limits.maxEntries) {
    throw invalid(
      `The ZIP holds ${count} entries; at most ${limits.maxEntries} are accepted (svc.backup.max-entries).`,
      { path: 'body' },
    );
  }
  if (directoryOffset + directorySize > end) throw broken('the central directory lies outside the archive');
  const decoder = new TextDecoder('utf-8', { fatal: false });
  const entries: CentralEntry[] = [];
  let at = directoryOffset;
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (u32(data, at) !== CENTRAL_ENTRY) throw broken(`central directory entry ${i + 1} is damaged`);
    const nameLength = u16(data, at + 28);
    const extraLength = u16(data, at + 30);
    const commentLength = u16(data, at + 32);
    if (at + 46 + nameLength > data.length) throw broken('it is truncated');
    const written = decoder.decode(data.subarray(at + 46, at + 46 + nameLength));
    const entry: CentralEntry = {
      flags: u16(data, at + 8),
      method: u16(data, at + 10),
      crc: u32(data, at + 16),
      compressedSize: u32(data, at + 20),
      size: u32(data, at + 24),
      localOffset: u32(data, at + 42),
      name: normalizedEntryName(written),
    };
    const unsafe = unsafeEntryName(entry.name);
    if (unsafe)
      throw invalid(`The ZIP entry name '${written}' is refused: ${unsafe}.`, { path: 'body', entry: written });
    if (entry.size === 0xffffffff || entry.compressedSize === 0xffffffff)
      throw broken(`entry '${entry.name}' needs ZIP64`);
    if (entry.flags & 1)
      throw invalid(`The ZIP entry '${entry.name}' is encrypted; encrypted archives are not supported.`, {
        path: 'body',
      });
    if (entry.method !== 0 && entry.method !== 8) {
      throw invalid(
        `The ZIP entry '${entry.name}' uses compression method ${entry.method}; only stored and deflated entries are supported.`,
        { path: 'body' },
      );
    }
    total += entry.size;
    if (total > limits.maxUnpackedBytes) {
      throw new ZipTooLargeError(
        `The ZIP unpacks to more than ${limits.maxUnpackedBytes} bytes (svc.backup.max-zip-bytes).`,
      );
    }
    entries.push(entry);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

const inflateAsync = promisify(inflateRaw);

/** Inflates on the thread pool; zlib stops with ERR_BUFFER_TOO_LARGE as soon as the output passes `declaredSize`. */
async function inflateCapped(compressed: Uint8Array, declaredSize: number, name: string): Promise<Uint8Array> {
  let output: Uint8Array;
  try {
    output = await inflateAsync(compressed, { maxOutputLength: Math.max(declaredSize, 1) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw broken(`entry '${name}' unpacks to more than its declared ${declaredSize} bytes`);
    throw broken(`entry '${name}' cannot be inflated (${(error as Error).message})`);
  }
  if (output.length !== declaredSize)
    throw broken(`entry '${name}' unpacks to ${output.length} bytes, not its declared ${declaredSize}`);
  return output;
}

async function entryData(data: Uint8Array, entry: CentralEntry): Promise<Uint8Array> {
  const at = entry.localOffset;
  if (u32(data, at) !== LOCAL_ENTRY) throw broken(`the local header of '${entry.name}' is missing`);
  const start = at + 30 + u16(data, at + 26) + u16(data, at + 28);
  const end = start + entry.compressedSize;
  if (end > data.length) throw broken(`entry '${entry.name}' is truncated`);
  const compressed = data.subarray(start, end);
  if (entry.method === 0 && entry.compressedSize !== entry.size)
    throw broken(`stored entry '${entry.name}' has inconsistent sizes`);
  const content = entry.method === 0 ? compressed.slice() : await inflateCapped(compressed, entry.size, entry.name);
  if (crc32(content) >>> 0 !== entry.crc) throw broken(`entry '${entry.name}' fails its CRC check`);
  return content;
}

let unzipping = 0;
const waitingUnzips: (() => void)[] = [];

async function inUnzipSlot<T>(work: () => Promise<T>): Promise<T> {
  if (unzipping < PARALLEL_UNZIPS) unzipping++;
  else await new Promise<void>((resolve) => waitingUnzips.push(resolve));
  try {
    return await work();
  } finally {
    const next = waitingUnzips.shift();
    if (next) next();
    else unzipping--;
  }
}

/** The file entries of a ZIP by name. Rejects with `invalid` (400) naming the problem, or `ZipTooLargeError` (413). */
export function readZip(data: Uint8Array, limits: ZipLimits): Promise<Map<string, Uint8Array>> {
  return inUnzipSlot(async () => {
    const files = new Map<string, Uint8Array>();
    for (const entry of readCentralDirectory(data, limits)) {
      if (entry.name.endsWith('/')) continue;
      if (files.has(entry.name))
        throw invalid(`The ZIP holds the entry '${entry.name}' twice.`, { path: 'body', entry: entry.name });
      files.set(entry.name, await entryData(data, entry));
    }
    return files;
  });
}
