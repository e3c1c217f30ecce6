import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * The outbound URL guard (SSRF protection, SPEC security 9, DESIGN §5 `svc.security.ssrf-protection.enabled`).
 * When enabled it refuses targets whose host is, or resolves to, an address that is not on the public internet:
 * loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10), shared (CGNAT
 * 100.64/10), unspecified, multicast, broadcast/reserved and the cloud metadata addresses — also in their
 * IPv4-mapped IPv6 forms (`::ffff:127.0.0.1`).
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

/** Most specific first: the metadata addresses sit inside link-local / unique-local ranges. */
const IPV4_RANGES: readonly Range[] = [
  range('it is a cloud metadata address', [['169.254.169.254', 32], ['100.100.100.200', 32]]),
  range('it is a loopback address', [['127.0.0.0', 8]]),
  range('it is the unspecified address', [['0.0.0.0', 8]]),
  range('it is a private address', [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16]]),
  range('it is a link-local address', [['169.254.0.0', 16]]),
  range('it is a shared (carrier-grade NAT) address', [['100.64.0.0', 10]]),
  range('it is a multicast address', [['224.0.0.0', 4]]),
  range('it is a reserved or broadcast address', [['240.0.0.0', 4], ['192.0.0.0', 24], ['198.18.0.0', 15]]),
];

const IPV6_RANGES: readonly Range[] = [
  range('it is a cloud metadata address', [['fd00:ec2::254', 128]]),
  range('it is a loopback address', [['::1', 128]]),
  range('it is the unspecified address', [['::', 128]]),
  range('it is a private (unique local) address', [['fc00::', 7]]),
  range('it is a link-local address', [['fe80::', 10]]),
  range('it is a multicast address', [['ff00::', 8]]),
];

const MAPPED_DOTTED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
const MAPPED_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;
/** NAT64 (64:ff9b::/96) embeds an IPv4 address the same way. */
const NAT64_DOTTED = /^64:ff9b::(\d{1,3}(?:\.\d{1,3}){3})$/i;
const NAT64_HEX = /^64:ff9b::([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/** The IPv4 address embedded in an IPv4-mapped (or NAT64) IPv6 address, if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = MAPPED_DOTTED.exec(lower) ?? NAT64_DOTTED.exec(lower);
  if (dotted) return dotted[1];
  const hex = MAPPED_HEX.exec(lower) ?? NAT64_HEX.exec(lower);
  if (!hex) return undefined;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
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
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
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
