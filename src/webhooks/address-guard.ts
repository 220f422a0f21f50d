/**
 * @module The address rule of webhook delivery (DESIGN §11.2, SSRF guard): an operator's URL must
 * not make Gatehouse post into its own network — loopback, private, link-local, unique-local,
 * carrier-grade NAT, cloud metadata, and every special-purpose range. IPv6 forms that carry an
 * IPv4 address (mapped, NAT64, 6to4) are judged by the address they carry.
 *
 * The rule is an allow-list in effect: an IPv4 address passes only when ipaddr.js calls it plain
 * unicast, an IPv6 address only when it is unicast inside 2000::/3 (the only block IANA hands out
 * as global unicast), so a range nobody thought of is refused rather than reached.
 *
 * `guardedLookup` plugs the rule into Node's connection: it is the `lookup` of `http.request`, so
 * the addresses it checked are the ones the socket connects to — there is no second resolution
 * for a short-lived DNS answer to change in between (DNS rebinding).
 */
import dns, { type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface AddressRules {
  allowPrivateNetworks: boolean;
}

/** The code of the error `guardedLookup` fails a connection with. */
export const ADDRESS_REFUSED = 'WEBHOOK_ADDRESS_REFUSED';

/** Well-known instance-metadata endpoints (AWS, GCP, Azure, Alibaba, …), named as such so the refusal says what was at stake. */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '100.100.100.200', 'fd00:ec2:0:0:0:0:0:254']);

const V4_CLASSES: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified ("this network") address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  reserved: 'a reserved address',
};

const V6_CLASSES: Readonly<Record<string, string>> = {
  unspecified: 'the unspecified address',
  linkLocal: 'a link-local address',
  multicast: 'a multicast address',
  loopback: 'a loopback address',
  uniqueLocal: 'a unique-local address',
  deprecatedSiteLocal: 'a site-local address',
  teredo: 'a Teredo tunnel address',
  reserved: 'a reserved address',
};

/** 2000::/3, global unicast. */
const GLOBAL_UNICAST_V6: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];
/** 64:ff9b::/96, the well-known NAT64 prefix: the last 32 bits are the IPv4 address reached. */
const NAT64_WELL_KNOWN: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('64:ff9b::'), 96];

function v4FromWords(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function v4Class(address: ipaddr.IPv4): string | null {
  if (METADATA_ADDRESSES.has(address.toString())) return 'a cloud metadata address';
  const range = address.range();
  if (range === 'unicast') return null;
  return V4_CLASSES[range] ?? `a special-purpose address (${range})`;
}

/** The IPv4 address an IPv6 form carries and what the form is called, or null for a form that carries none. */
function embeddedV4(address: ipaddr.IPv6, range: string): { v4: ipaddr.IPv4; form: string } | null {
  const parts = address.parts;
  const [p1 = 0, p2 = 0, p6 = 0, p7 = 0] = [parts[1], parts[2], parts[6], parts[7]];
  if (range === 'ipv4Mapped') return { v4: v4FromWords(p6, p7), form: 'an IPv4-mapped form' };
  if (range === 'rfc6145') return { v4: v4FromWords(p6, p7), form: 'an IPv4-translated form' };
  if (range === 'rfc6052' && address.match(NAT64_WELL_KNOWN)) return { v4: v4FromWords(p6, p7), form: 'a NAT64 form' };
  if (range === '6to4') return { v4: v4FromWords(p1, p2), form: 'a 6to4 form' };
  return null;
}

function v6Class(address: ipaddr.IPv6): string | null {
  if (METADATA_ADDRESSES.has(address.toNormalizedString())) return 'a cloud metadata address';
  const range = address.range();
  const embedded = embeddedV4(address, range);
  if (embedded !== null) {
    const inner = v4Class(embedded.v4);
    return inner === null ? null : `${embedded.form} of ${embedded.v4.toString()}, ${inner}`;
  }
  if (range === 'rfc6052') return 'a local-use NAT64 address';
  if (range === 'unicast') {
    // Outside 2000::/3 sits what IANA has not handed out, and ::/96 (deprecated IPv4-compatible
    // addresses, which some stacks still tunnel to the IPv4 inside).
    return address.match(GLOBAL_UNICAST_V6) ? null : 'a reserved address';
  }
  return V6_CLASSES[range] ?? `a special-purpose address (${range})`;
}

/**
 * Why an address may not be sent to, or null. The answer names the address and its class (e.g.
 * "127.0.0.1 is a loopback address"); a string that is not an IP address is refused. Under
 * `allowPrivateNetworks` everything passes.
 */
export function refusedAddress(address: string, rules: AddressRules): string | null {
  if (rules.allowPrivateNetworks) return null;
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(bare)) return `${bare} is not an IP address`;
  const parsed = ipaddr.parse(bare);
  const why = parsed.kind() === 'ipv4' ? v4Class(parsed as ipaddr.IPv4) : v6Class(parsed as ipaddr.IPv6);
  return why === null ? null : `${bare} is ${why}`;
}

function refusal(hostname: string, why: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`address refused for ${hostname}: ${why}`);
  error.code = ADDRESS_REFUSED;
  return error;
}

type LookupCallback = Parameters<LookupFunction>[2];

/**
 * A `dns.lookup`-compatible function for `http.request`'s `lookup` option. It resolves every
 * address of the name (with `resolve`, default `dns.lookup`), refuses the whole name when any one
 * is refused — a name with one private address among public ones could be steered to it — and
 * hands the checked addresses to the socket, in the shape the caller asked for (`all`, as Node's
 * happy-eyeballs connect asks, or one address).
 */
export function guardedLookup(rules: AddressRules, resolve: typeof dns.lookup = dns.lookup): LookupFunction {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    const all: LookupAllOptions = { ...options, all: true };
    resolve(hostname, all, (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (error !== null) return callback(error, '');
      if (addresses.length === 0) {
        const empty: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
        empty.code = 'ENOTFOUND';
        return callback(empty, '');
      }
      for (const { address } of addresses) {
        const why = refusedAddress(address, rules);
        if (why !== null) return callback(refusal(hostname, why), '');
      }
      if (options.all === true) return callback(null, addresses);
      const [first] = addresses as [LookupAddress];
      return callback(null, first.address, first.family);
    });
  };
}
