import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AllowList, allowKey, isIpLiteral, isPublicAddress } from '../../src/net/address-policy.js';

describe('isPublicAddress', () => {
  it('accepts public unicast IPv4 and IPv6', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e']) {
      assert.equal(isPublicAddress(ip), true, ip);
    }
  });

  it('accepts transition addresses that embed a public IPv4 address', () => {
    assert.equal(isPublicAddress('64:ff9b::808:808'), true); // NAT64 of 8.8.8.8
    assert.equal(isPublicAddress('2002:808:808::1'), true); // 6to4 of 8.8.8.8
  });

  it('refuses every non-public IPv4 range', () => {
    const refused = [
      '127.0.0.1',
      '127.255.255.254',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '0.1.2.3',
      '224.0.0.1',
      '239.255.255.250',
      '255.255.255.255',
      '192.0.0.1',
      '192.0.2.1',
      '198.18.0.1',
      '198.51.100.1',
      '203.0.113.1',
      '240.0.0.1',
    ];
    for (const ip of refused) assert.equal(isPublicAddress(ip), false, ip);
  });

  it('refuses every non-public IPv6 range, including forms that embed private IPv4', () => {
    const refused = [
      '::1',
      '::',
      'fe80::1',
      'fe80::1%eth0',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      'fec0::1',
      '2001:db8::1',
      '100::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:8.8.8.8',
      '::ffff:10.0.0.1',
      '::7f00:1',
      '::8.8.8.8',
      '::ffff:0:7f00:1',
      '64:ff9b::7f00:1',
      '64:ff9b::a00:1',
      '64:ff9b:1::1',
      '2002:7f00:1::1',
      '2002:a00:1::',
      '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo with client 127.0.0.1
      '[::1]',
      '4000::1',
    ];
    for (const ip of refused) assert.equal(isPublicAddress(ip), false, ip);
  });

  it('refuses things that are not addresses', () => {
    for (const s of ['', 'localhost', 'example.com', '1.2.3', '999.1.1.1']) assert.equal(isPublicAddress(s), false, s);
  });
});

describe('allow list', () => {
  it('matches exact lower-case host:port with default ports made explicit', () => {
    const allow = new AllowList(['127.0.0.1:8080', 'localhost:80', '[::1]:443', 'Feeds.Test:8443']);
    assert.equal(allow.hasUrl(new URL('http://127.0.0.1:8080/x')), true);
    assert.equal(allow.hasUrl(new URL('http://127.0.0.1:8081/x')), false);
    assert.equal(allow.hasUrl(new URL('http://LOCALHOST/')), true);
    assert.equal(allow.hasUrl(new URL('https://localhost/')), false);
    assert.equal(allow.hasUrl(new URL('https://[::1]/')), true);
    assert.equal(allow.hasUrl(new URL('https://feeds.test:8443/')), true);
    assert.equal(allow.hasUrl(new URL('http://127.1:8080/')), true); // WHATWG URL normalizes to 127.0.0.1
    assert.equal(allow.has('::1', '', 'https:'), true); // as undici passes IPv6 hosts: no brackets
    assert.equal(allowKey('::1', '8080', 'http:'), '[::1]:8080');
  });

  it('recognizes IP literals', () => {
    assert.equal(isIpLiteral('127.0.0.1'), true);
    assert.equal(isIpLiteral('[::1]'), true);
    assert.equal(isIpLiteral('::1'), true);
    assert.equal(isIpLiteral('localhost'), false);
  });
});
