import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * The outbound URL guard (SSRF protection, SPEC security 9, DESIGN §5 `svc.security.ssrf-protection.enabled`).
 * When enabled it refuses targets whose host is, or resolves to, an address that is not on the public internet:
 * loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10), shared (CGNAT
 * 100.64/10), unspecified, documentation (TEST-NET, 2001:db8::/32), multicast, broadcast/reserved and the cloud
 * metadata addresses (the IANA special-purpose registries) — also when an IPv6 address embeds such an IPv4 one
 * (`::ffff:127.0.0.1`, `::127.0.0.1`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`).
 *
 * `check(url)` is the early, explicit check (it resolves the host and looks at every address). `lookup` is the
 * DNS lookup to give to the socket (`http.request({ lookup })`): it resolves again and refuses the same addresses,
 * so the socket connects only to an address that was checked — a DNS answer that changes between `check` and the
 * connection (DNS rebinding) cannot slip through. IP-literal hosts are not looked up by Node, so `check` must run
 * before every request (and every redirect).
 */

export interface UrlGuard {
  readonly enabled: boolean;
  /** Rejects with `BlockedUrlError` when the URL's host is or resolves to a refused address. */
  check(url: URL): Promise<void>;
  /** The DNS lookup sockets should use: the default one when disabled, a checking one when enabled. */
  readonly lookup: LookupFunction;
}

/** A target the guard refuses; the message names the host and the reason (URLs never carry credentials here). */
export class BlockedUrlError extends Error {
  readonly host: string;
  readonly reason: string;

  constructor(host: string, reason: string) {
    super(`The outbound request to '${host}' was refused: ${reason}.`);
    this.name = 'BlockedUrlError';
    this.host = host;
    this.reason = reason;
  }
}

/** Whether `error`, or an error it was caused by (fetch wraps connect failures), is a refusal of the guard. */
export function isRefusedByUrlGuard(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current instanceof BlockedUrlError) return true;
  }
  return false;
}

interface Range {
  readonly reason: string;
  readonly list: BlockList;
}

function range(reason: string, subnets: ReadonlyArray<readonly [string, number]>): Range {
  const list = new BlockList();
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, isIP(network) === 6 ? 'ipv6' : 'ipv4');
  return { reason, list };
}

/**
 * The IANA special-purpose registries (IPv4 and IPv6) minus what is globally reachable, most specific first: the
 * metadata addresses sit inside link-local / unique-local ranges.
 */
const IPV4_RANGES: readonly Range[] = [
  range('it is a cloud metadata address', [
    ['169.254.169.254', 32],
    ['100.100.100.200', 32],
  ]),
  range('it is a loopback address', [['127.0.0.0', 8]]),
  range('it is the unspecified address', [['0.0.0.0', 8]]),
  range('it is a private address', [
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
  ]),
  range('it is a link-local address', [['169.254.0.0', 16]]),
  range('it is a shared (carrier-grade NAT) address', [['100.64.0.0', 10]]),
  range('it is a documentation address', [
    ['192.0.2.0', 24],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
  ]),
  range('it is a multicast address', [['224.0.0.0', 4]]),
  range('it is a reserved or broadcast address', [
    ['240.0.0.0', 4],
    ['192.0.0.0', 24],
    ['198.18.0.0', 15],
    ['192.88.99.0', 24],
  ]),
];

const IPV6_RANGES: readonly Range[] = [
  range('it is a cloud metadata address', [['fd00:ec2::254', 128]]),
  range('it is a loopback address', [['::1', 128]]),
  range('it is the unspecified address', [['::', 128]]),
  range('it is a private (unique local) address', [
    ['fc00::', 7],
    ['fec0::', 10],
  ]),
  range('it is a link-local address', [['fe80::', 10]]),
  range('it is a documentation address', [
    ['2001:db8::', 32],
    ['3fff::', 20],
  ]),
  range('it is a multicast address', [['ff00::', 8]]),
  // IPv4-compatible, local-use NAT64, discard-only, IETF protocol assignments (Teredo, benchmarking, ORCHID), SRv6.
  range('it is a reserved address', [
    ['::', 96],
    ['64:ff9b:1::', 48],
    ['100::', 64],
    ['2001::', 23],
    ['5f00::', 16],
  ]),
];

/** The eight 16-bit words of an IPv6 address (valid, zone removed); a dotted IPv4 tail gives the last two. */
function ipv6Words(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const words = (part: string) => (part === '' ? [] : part.split(':').map((word) => parseInt(word, 16)));
  const [head = '', tail] = text.split('::');
  if (tail === undefined) return words(head);
  const before = words(head);
  const after = words(tail);
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}

const zeros = (words: readonly number[]) => words.every((word) => word === 0);
const dottedQuad = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.');

/**
 * The IPv4 address an IPv6 address stands for, if any: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated
 * (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) and 6to4 (`2002:aabb:ccdd::`).
 */
function embeddedIpv4(address: string): string | undefined {
  const w = ipv6Words(address);
  const [high, low] = [w[6]!, w[7]!];
  if (zeros(w.slice(0, 5)) && w[5] === 0xffff) return dottedQuad(high, low);
  if (zeros(w.slice(0, 4)) && w[4] === 0xffff && w[5] === 0) return dottedQuad(high, low);
  if (zeros(w.slice(0, 6)) && high !== 0) return dottedQuad(high, low);
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(w.slice(2, 6))) return dottedQuad(high, low);
  if (w[0] === 0x2002) return dottedQuad(w[1]!, w[2]!);
  return undefined;
}

/** Why `address` (an IP literal) is refused, or undefined when it is a public address. */
export function refusalReason(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 4) return IPV4_RANGES.find((r) => r.list.check(bare, 'ipv4'))?.reason;
  if (family === 6) {
    const zoneless = bare.replace(/%.*$/, '');
    const v4 = embeddedIpv4(zoneless);
    if (v4 !== undefined) return refusalReason(v4);
    return IPV6_RANGES.find((r) => r.list.check(zoneless, 'ipv6'))?.reason;
  }
  return 'it is not an IP address';
}

function lookupAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });
}

function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Resolves `host` and refuses it when any of its addresses is refused (or it resolves to nothing). */
async function checkedAddresses(host: string): Promise<LookupAddress[]> {
  if (isIP(host) !== 0) {
    const reason = refusalReason(host);
    if (reason !== undefined) throw new BlockedUrlError(host, reason);
    return [{ address: host, family: isIP(host) }];
  }
  let addresses: LookupAddress[];
  try {
    addresses = await lookupAll(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'lookup failed';
    throw new BlockedUrlError(host, `its name could not be resolved (${code})`);
  }
  if (addresses.length === 0) throw new BlockedUrlError(host, 'its name resolves to no address');
  for (const { address } of addresses) {
    const reason = refusalReason(address);
    if (reason !== undefined) throw new BlockedUrlError(host, `it resolves to ${address} and ${reason}`);
  }
  return addresses;
}

/** A `net` lookup function that answers only with checked addresses. */
const guardedLookup = ((hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
  const all = typeof options === 'object' && options !== null && options.all === true;
  const family = typeof options === 'object' && options !== null ? options.family : undefined;
  checkedAddresses(hostname).then(
    (addresses) => {
      const wanted = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
      if (wanted.length === 0) {
        callback(Object.assign(new Error(`no IPv${String(family)} address for '${hostname}'`), { code: 'ENOTFOUND' }));
      } else if (all) {
        callback(null, wanted);
      } else {
        callback(null, wanted[0]!.address, wanted[0]!.family);
      }
    },
    (error: unknown) => callback(error),
  );
}) as unknown as LookupFunction;

export function createUrlGuard(options: { enabled: boolean }): UrlGuard {
  if (!options.enabled) {
    return { enabled: false, check: async () => undefined, lookup: dnsLookup as unknown as LookupFunction };
  }
  return {
    enabled: true,
    async check(url) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new BlockedUrlError(url.host, `the scheme '${url.protocol.replace(/:$/, '')}' is not allowed`);
      }
      await checkedAddresses(hostOf(url));
    },
    lookup: guardedLookup,
  };
}

/** An always-enabled guard, for targets that are protected whatever the setting says (the built-in web tools). */
export const alwaysGuard: UrlGuard = createUrlGuard({ enabled: true });
