import type { LookupAddress } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { PrivateNetworks } from '../config/webhooks.js';

/** Addresses a delivery never reaches unless WEBHOOK_PRIVATE_NETWORKS=allow: private, loopback, link-local, shared, reserved, multicast. */
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv4');
// IPv6: IPv4-compatible (unspecified and loopback among them), IPv4-translated, NAT64 and 6to4 (which carry an IPv4 address of any kind),
// discard, documentation, unique-local, link-local, site-local, multicast.
for (const [net, prefix] of [
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv6');
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** A name's addresses are asked of DNS (c-ares, not the threads getaddrinfo would hold) for at most this long. */
const RESOLVE_WITHIN_MS = 2_000;
const resolver = new Resolver({ timeout: RESOLVE_WITHIN_MS / 2, tries: 2 });
/** What every refusal of where a URL leads says: whether a name does not resolve or leads inside is not told apart. */
export const NOT_PUBLIC = 'la URL no lleva a una dirección pública (WEBHOOK_PRIVATE_NETWORKS)';

/** An IPv6 address that carries an IPv4 one (`::ffff:a.b.c.d`, or its hex form `::ffff:7f00:1`): that IPv4 address. */
function unmapped(address: string): string {
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(.+)$/i.exec(address)?.[1];
  if (!mapped) return address;
  if (isIP(mapped) === 4) return mapped;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(mapped);
  if (!hex) return address;
  const n = (parseInt(hex[1]!, 16) << 16) | parseInt(hex[2]!, 16);
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

const bare = (address: string) => address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');

/** Whether a delivery may connect to `address` (an IP, as a resolver answers it) under `rule`. */
export function mayReach(address: string, rule: PrivateNetworks): boolean {
  if (rule === 'allow') return true;
  const ip = unmapped(bare(address));
  const type = isIP(ip) === 4 ? 'ipv4' : isIP(ip) === 6 ? 'ipv6' : undefined;
  if (!type) return false;
  if (rule === 'loopback' && LOOPBACK.check(ip, type)) return true;
  return !PRIVATE.check(ip, type);
}

/** Whether `address` is a loopback one (127/8, ::1, or either mapped). */
export function isLoopback(address: string): boolean {
  const ip = unmapped(bare(address));
  return LOOPBACK.check(ip, isIP(ip) === 4 ? 'ipv4' : 'ipv6');
}

/** Whether plain http may carry a delivery to these addresses: with `allow`, or to loopback in the sandbox. */
export const plainAllowed = (addresses: readonly string[], rule: PrivateNetworks) =>
  rule === 'allow' || (rule === 'loopback' && addresses.length > 0 && addresses.every(isLoopback));

/** Why a URL is refused before anything is asked of DNS (its scheme, its credentials, an address written in it), or undefined. */
export function formRefusal(url: URL, rule: PrivateNetworks): string | undefined {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'la URL debe ser https://';
  try {
    decodeURIComponent(url.username + url.password);
  } catch {
    return 'las credenciales de la URL no se pueden leer';
  }
  const literal = bare(url.hostname);
  if (!isIP(literal)) return url.protocol === 'http:' && rule === 'deny' ? 'la URL debe ser https://' : undefined;
  if (!mayReach(literal, rule)) return NOT_PUBLIC;
  return url.protocol === 'http:' && !plainAllowed([literal], rule) ? 'la URL debe ser https://' : undefined;
}

/** Why a URL is refused once its name is resolved (every address must be one the rule admits), or undefined. */
export async function placeRefusal(url: URL, rule: PrivateNetworks): Promise<string | undefined> {
  const addresses = (await resolved(url.hostname).catch(() => [])).map((a) => a.address);
  if (!addresses.length || addresses.some((a) => !mayReach(a, rule))) return NOT_PUBLIC;
  return url.protocol === 'http:' && !plainAllowed(addresses, rule) ? 'la URL debe ser https://' : undefined;
}

/** A host's addresses: itself when an IP, loopback for `localhost` (RFC 6761), else DNS's A and AAAA records, within RESOLVE_WITHIN_MS. */
export async function resolved(host: string): Promise<LookupAddress[]> {
  const literal = bare(host);
  if (isIP(literal)) return [{ address: literal, family: isIP(literal) }];
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost'))
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
  const addresses = [
    ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
  ];
  if (!addresses.length) throw Object.assign(new Error('the receiver’s name does not resolve'), { code: 'ENOTFOUND' });
  return addresses;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the delivery's sockets: the name is resolved as it connects, and an address the
 * rule forbids fails the connection, so a name that later resolves elsewhere reaches nothing private; `plain`: an http URL.
 */
export function guardedLookup(rule: PrivateNetworks, plain: boolean) {
  return (host: string, options: { all?: boolean }, callback: LookupCallback): void => {
    resolved(host).then(
      (addresses) => {
        const refused =
          addresses.some((a) => !mayReach(a.address, rule)) ||
          (plain &&
            !plainAllowed(
              addresses.map((a) => a.address),
              rule,
            ));
        if (refused) {
          const denied = Object.assign(new Error('the receiver resolves to an address WEBHOOK_PRIVATE_NETWORKS denies'), {
            code: 'EADDRNOTALLOWED',
          });
          return callback(denied, []);
        }
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}
