// Which addresses outbound fetches may connect to. Only public unicast addresses pass; everything that reaches
// this machine, the local network or special-purpose space is refused. The single exemption is the configured
// allow-list of exact `host:port` pairs (OUTBOUND_ALLOW), which local test servers use.

import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** True when `address` (an IP literal, IPv6 without brackets, optionally with a zone) is public unicast. */
export function isPublicAddress(address: string): boolean {
  const literal = stripBrackets(address);
  // Only canonical literals (as a resolver or WHATWG URL produces them); ipaddr.js would also take "1.2.3".
  if (net.isIP(literal) === 0) return false;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(literal);
  } catch {
    return false;
  }
  return parsed.kind() === 'ipv4' ? isPublicIPv4(parsed as ipaddr.IPv4) : isPublicIPv6(parsed as ipaddr.IPv6);
}

function isPublicIPv4(ip: ipaddr.IPv4): boolean {
  return ip.range() === 'unicast';
}

function isPublicIPv6(ip: ipaddr.IPv6): boolean {
  const bytes = ip.toByteArray();
  switch (ip.range()) {
    case 'unicast':
      // IPv4-compatible (::a.b.c.d, deprecated) has 96 leading zero bits; refuse it outright.
      if (bytes.slice(0, 12).every((b) => b === 0)) return false;
      // Only global unicast (2000::/3) is routable on the internet; the rest is unassigned.
      return (bytes[0]! & 0xe0) === 0x20;
    case 'rfc6052': {
      // NAT64 well-known prefix 64:ff9b::/96 carries an IPv4 address in its last 32 bits; the local-use prefix
      // 64:ff9b:1::/48 is site-specific and refused.
      if (!bytes.slice(4, 12).every((b) => b === 0)) return false;
      return isPublicIPv4(new ipaddr.IPv4(bytes.slice(12, 16)));
    }
    case '6to4':
      // 2002:AABB:CCDD::/48 embeds the IPv4 address AA.BB.CC.DD.
      return isPublicIPv4(new ipaddr.IPv4(bytes.slice(2, 6)));
    case 'teredo': {
      // 2001:0000:SSSS:SSSS:flags:port:CCCC:CCCC — server address in clear, client address bit-inverted.
      const server = new ipaddr.IPv4(bytes.slice(4, 8));
      const client = new ipaddr.IPv4(bytes.slice(12, 16).map((b) => b ^ 0xff));
      return isPublicIPv4(server) && isPublicIPv4(client);
    }
    default:
      // loopback, unspecified, linkLocal, uniqueLocal, multicast, ipv4Mapped, rfc6145, discard, reserved, ...
      return false;
  }
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** True when `host` (as in a URL or as undici passes it: IPv6 with or without brackets) is an IP literal. */
export function isIpLiteral(host: string): boolean {
  return net.isIP(stripBrackets(host)) !== 0;
}

/**
 * The allow-list key for a host and port: lower-case host as written in a URL (IPv6 in brackets) and an explicit
 * port (80/443 filled in for the default), e.g. `127.0.0.1:8080`, `[::1]:80`, `localhost:443`.
 */
export function allowKey(host: string, port: string | number, protocol: string): string {
  let h = host.toLowerCase();
  if (net.isIPv6(h)) h = `[${h}]`;
  const p = port === '' || port === undefined ? (protocol === 'https:' ? '443' : '80') : String(port);
  return `${h}:${p}`;
}

/** The configured exemptions: exact `host:port` pairs. */
export class AllowList {
  private readonly entries: Set<string>;

  constructor(entries: readonly string[]) {
    this.entries = new Set(entries.map((e) => e.trim().toLowerCase()).filter((e) => e !== ''));
  }

  has(host: string, port: string | number, protocol: string): boolean {
    return this.entries.has(allowKey(host, port, protocol));
  }

  hasUrl(url: URL): boolean {
    return this.has(url.hostname, url.port, url.protocol);
  }
}
