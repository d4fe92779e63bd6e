import { describe, expect, it } from 'vitest';
import { formRefusal, mayReach, NOT_PUBLIC, placeRefusal } from '../../src/webhooks/address.js';

/** Where a delivery may go: every form of a private address refused, public ones taken. */
const PRIVATE = [
  '127.0.0.1',
  '127.255.255.254',
  '10.1.2.3',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '224.0.0.1',
  '255.255.255.255',
  '198.18.0.1',
  '::1',
  '::',
  'fe80::1',
  'fe80::1%eth0',
  'fc00::1',
  'fd12:3456::1',
  'ff02::1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:10.0.0.1',
  '0:0:0:0:0:ffff:a9fe:a9fe',
  '64:ff9b::7f00:1',
  '2002:7f00:1::',
  '2001:db8::1',
  '[::1]',
  '::7f00:1',
  '::ffff:0:7f00:1',
  '::127.0.0.1',
];
const PUBLIC = ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'];

describe('mayReach', () => {
  it.each(PRIVATE)('refuses %s under deny', (address) => expect(mayReach(address, 'deny')).toBe(false));
  it.each(PUBLIC)('takes %s under deny', (address) => expect(mayReach(address, 'deny')).toBe(true));
  it('takes loopback, and only loopback, in the sandbox; anything with allow', () => {
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) expect(mayReach(address, 'loopback'), address).toBe(true);
    for (const address of ['10.1.2.3', '169.254.169.254', 'fe80::1']) expect(mayReach(address, 'loopback'), address).toBe(false);
    for (const address of PRIVATE) expect(mayReach(address, 'allow'), address).toBe(true);
  });
  it('refuses what is no address', () => expect(mayReach('example.com', 'deny')).toBe(false));
});

describe('refusalOf', () => {
  const refused = async (url: string, rule: 'deny' | 'loopback' | 'allow' = 'deny') =>
    formRefusal(new URL(url), rule) ?? (await placeRefusal(new URL(url), rule));
  it('refuses URLs to private addresses in any numeric form the URL parser knows', async () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://2130706433/',
      'https://0x7f.1/',
      'https://0177.0.0.1/',
      'https://127.1/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.1:8443/x',
      'https://localhost/',
    ]) {
      expect(await refused(url), url).toBe(NOT_PUBLIC);
    }
  });
  it('refuses http, and schemes other than https, unless allowed', async () => {
    expect(await refused('http://93.184.215.14/')).toBe('la URL debe ser https://');
    expect(await refused('ftp://93.184.215.14/')).toBe('la URL debe ser https://');
    expect(await refused('file:///etc/passwd')).toBe('la URL debe ser https://');
    expect(await refused('http://93.184.215.14/', 'allow')).toBeUndefined();
    expect(await refused('http://10.0.0.1/', 'allow')).toBeUndefined();
    // The sandbox: plain http to loopback only.
    expect(await refused('http://127.0.0.1:9/', 'loopback')).toBeUndefined();
    expect(await refused('http://93.184.215.14/', 'loopback')).toBe('la URL debe ser https://');
  });
  it('takes https to a public address, and refuses a name that resolves to nothing', async () => {
    expect(await refused('https://93.184.215.14/hook')).toBeUndefined();
    // Not told apart from a private address: the refusal says nothing of what a name inside resolves to.
    expect(await refused('https://no-such-host.invalid/')).toBe(NOT_PUBLIC);
    expect(await refused('https://ana:p%zz@93.184.215.14/')).toBe('las credenciales de la URL no se pueden leer');
  });
});
