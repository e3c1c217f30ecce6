import { crc32 } from 'node:zlib';
import { Inflate } from 'fflate';
import { AppError, invalid } from '../errors.ts';

/**
 * Reads an uploaded ZIP defensively: the central directory is read first, so the entry count, every entry name
 * and every declared size are checked before anything is inflated; inflating is then capped at the declared size
 * (a ZIP that lies about its sizes is refused, not believed) and every entry's CRC-32 is checked.
 * Directory entries are skipped. Nothing here touches the file system.
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
/** Compressed bytes handed to the inflater at a time, so that a bomb is stopped after little output. */
const INFLATE_CHUNK = 4096;

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

/** Why an entry name is refused, or undefined when it is a plain relative path. */
export function unsafeEntryName(name: string): string | undefined {
  if (name.length === 0) return 'it is empty';
  if (name.includes('\\')) return 'it contains a backslash';
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
    const entry: CentralEntry = {
      flags: u16(data, at + 8),
      method: u16(data, at + 10),
      crc: u32(data, at + 16),
      compressedSize: u32(data, at + 20),
      size: u32(data, at + 24),
      localOffset: u32(data, at + 42),
      name: decoder.decode(data.subarray(at + 46, at + 46 + nameLength)),
    };
    const unsafe = unsafeEntryName(entry.name);
    if (unsafe)
      throw invalid(`The ZIP entry name '${entry.name}' is refused: ${unsafe}.`, { path: 'body', entry: entry.name });
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

function inflateCapped(compressed: Uint8Array, declaredSize: number, name: string): Uint8Array {
  const output = new Uint8Array(declaredSize);
  let written = 0;
  const inflater = new Inflate((chunk) => {
    if (written + chunk.length > declaredSize)
      throw broken(`entry '${name}' unpacks to more than its declared ${declaredSize} bytes`);
    output.set(chunk, written);
    written += chunk.length;
  });
  try {
    if (compressed.length === 0) inflater.push(compressed, true);
    for (let at = 0; at < compressed.length; at += INFLATE_CHUNK) {
      inflater.push(compressed.subarray(at, at + INFLATE_CHUNK), at + INFLATE_CHUNK >= compressed.length);
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw broken(`entry '${name}' cannot be inflated (${(error as Error).message})`);
  }
  if (written !== declaredSize)
    throw broken(`entry '${name}' unpacks to ${written} bytes, not its declared ${declaredSize}`);
  return output;
}

function entryData(data: Uint8Array, entry: CentralEntry): Uint8Array {
  const at = entry.localOffset;
  if (u32(data, at) !== LOCAL_ENTRY) throw broken(`the local header of '${entry.name}' is missing`);
  const start = at + 30 + u16(data, at + 26) + u16(data, at + 28);
  const end = start + entry.compressedSize;
  if (end > data.length) throw broken(`entry '${entry.name}' is truncated`);
  const compressed = data.subarray(start, end);
  if (entry.method === 0 && entry.compressedSize !== entry.size)
    throw broken(`stored entry '${entry.name}' has inconsistent sizes`);
  const content = entry.method === 0 ? compressed.slice() : inflateCapped(compressed, entry.size, entry.name);
  if (crc32(content) >>> 0 !== entry.crc) throw broken(`entry '${entry.name}' fails its CRC check`);
  return content;
}

/** The file entries of a ZIP by name. Throws `invalid` (400) naming the problem, or `ZipTooLargeError` (413). */
export function readZip(data: Uint8Array, limits: ZipLimits): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  for (const entry of readCentralDirectory(data, limits)) {
    if (entry.name.endsWith('/')) continue;
    if (files.has(entry.name))
      throw invalid(`The ZIP holds the entry '${entry.name}' twice.`, { path: 'body', entry: entry.name });
    files.set(entry.name, entryData(data, entry));
  }
  return files;
}
