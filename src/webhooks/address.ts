import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { PrivateNetworks } from '../config/webhooks.js';

/** Addresses a delivery never reaches unless WEBHOOK_PRIVATE_NETWORKS=allow: private, loopback, link-local, shared, reserved, multicast. */
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 3],
] as const) PRIVATE.addSubnet(net, prefix, 'ipv4');
// IPv6: unspecified, loopback, NAT64 and 6to4 (which carry an IPv4 address of any kind), discard, documentation, unique-local, link-local, multicast.
for (const [net, prefix] of [
  ['::', 127], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) PRIVATE.addSubnet(net, prefix, 'ipv6');
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

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

/** Whether a delivery may connect to `address` (an IP, as a resolver answers it) under `rule`. */
export function mayReach(address: string, rule: PrivateNetworks): boolean {
  if (rule === 'allow') return true;
  const ip = unmapped(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  const type = isIP(ip) === 4 ? 'ipv4' : isIP(ip) === 6 ? 'ipv6' : undefined;
  if (!type) return false;
  if (rule === 'loopback' && LOOPBACK.check(ip, type)) return true;
  return !PRIVATE.check(ip, type);
}

/** Whether `address` is a loopback one (127/8, ::1, or either mapped). */
export function isLoopback(address: string): boolean {
  const ip = unmapped(address.replace(/^\[|\]$/g, ''));
  return LOOPBACK.check(ip, isIP(ip) === 4 ? 'ipv4' : 'ipv6');
}

/** Whether plain http may carry a delivery to these addresses: with `allow`, or to loopback in the sandbox. */
export const plainAllowed = (addresses: readonly string[], rule: PrivateNetworks) =>
  rule === 'allow' || (rule === 'loopback' && addresses.length > 0 && addresses.every(isLoopback));

/** Why a subscription's URL is refused (a sentence for INVALID_INPUT), or undefined when it is taken. The URL itself is never in it. */
export async function refusalOf(url: URL, rule: PrivateNetworks): Promise<string | undefined> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'la URL debe ser https://';
  const addresses = (await resolved(url.hostname).catch(() => [])).map((a) => a.address);
  if (!addresses.length) return 'el nombre de la URL no resuelve a ninguna dirección';
  if (addresses.some((a) => !mayReach(a, rule))) return 'la URL lleva a una dirección privada, de loopback o link-local (WEBHOOK_PRIVATE_NETWORKS)';
  if (url.protocol === 'http:' && !plainAllowed(addresses, rule)) return 'la URL debe ser https://';
  return undefined;
}

function resolved(host: string): Promise<LookupAddress[]> {
  const literal = host.replace(/^\[|\]$/g, '');
  if (isIP(literal)) return Promise.resolve([{ address: literal, family: isIP(literal) }]);
  return new Promise((resolve, reject) => dnsLookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the delivery's sockets: the name is resolved as it connects, and an address the
 * rule forbids fails the connection, so a name that later resolves elsewhere reaches nothing private; `plain`: an http URL.
 */
export function guardedLookup(rule: PrivateNetworks, plain: boolean) {
  return (host: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(host, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.some((a) => !mayReach(a.address, rule)) || (plain && !plainAllowed(addresses.map((a) => a.address), rule));
      if (refused || !addresses.length) {
        const denied = Object.assign(new Error('the receiver resolves to an address WEBHOOK_PRIVATE_NETWORKS denies'), { code: 'EADDRNOTALLOWED' });
        return callback(denied, []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}
