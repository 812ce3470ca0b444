// The LAN listener's certificate: self-signed, made for this data folder on first use and kept in
// `<dataDir>/lan-certificate.json` (owner-only, written aside and renamed, like browser-link.json).
// Its subjectAltName carries the server's own names (its LAN addresses, IPv4 and IPv6, hostname,
// hostname.local, localhost, 127.0.0.1, ::1 when it listens on IPv6); a change of those names, or fewer than RENEW_BEFORE_DAYS days left, makes a
// new one (a paired phone then sees a new fingerprint and is shown it again when pairing).
// Nobody vouches for it: a device trusts it by comparing the fingerprint the pairing QR carries
// (SHA-256 of the DER, colon hex as browsers show it).
//
// ECDSA P-256 through Node's WebCrypto and @peculiar/x509 (which needs a Reflect polyfill loaded first).
import 'reflect-metadata';

import { randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import fs from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';

import * as x509 from '@peculiar/x509';

export const CERTIFICATE_FILE = 'lan-certificate.json';
const VALID_DAYS = 397;
const RENEW_BEFORE_DAYS = 30;
const DAY_MS = 86_400_000;

export interface Certificate {
  /** PEM */
  cert: string;
  /** PEM, PKCS#8 */
  key: string;
  /** SHA-256 of the certificate's DER, upper-case colon hex (AB:CD:…), as browsers show it. */
  fingerprint: string;
}

interface Stored {
  cert: string;
  key: string;
  names: string[];
}

// Node's webcrypto is the Web Crypto API; its type differs from DOM's Crypto in a project that has both.
const provider: { set(crypto: unknown): void } = x509.cryptoProvider;
provider.set(webcrypto);

const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * An IP address as a browser writes it in a URL's host (without the brackets), or null for anything
 * else: IPv4 in dotted decimal; IPv6 lower-case and compressed (0:0:0:0:0:0:0:1 is ::1, an IPv4-mapped
 * tail in hex), brackets allowed around it. An IPv6 zone (fe80::1%eth0) is not an address a browser or
 * a certificate can name: null.
 */
export function canonicalIp(name: string): string | null {
  const bare = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  const family = isIP(bare);
  if (family === 4) return bare;
  if (family === 6 && !bare.includes('%')) return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  return null;
}

/** The names, cleaned: lower-case, IP addresses canonical, no duplicates, sorted, each a DNS name or an IP address (else an error in words). */
export function normaliseNames(names: readonly string[]): string[] {
  const out = new Set<string>();
  for (const raw of names) {
    const name = raw.trim().toLowerCase();
    const ip = canonicalIp(name);
    if (ip === null && !DNS_NAME.test(name)) throw new Error(`tls: “${raw}” is neither a host name nor an IP address`);
    out.add(ip ?? name);
  }
  if (out.size === 0) throw new Error('tls: a certificate needs at least one name');
  return [...out].sort();
}

/** The SHA-256 fingerprint of a PEM certificate, as browsers show it (AB:CD:…). */
export function fingerprintOf(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256;
}

/**
 * The folder's certificate for `names`: the kept one when it names exactly these and has more than
 * RENEW_BEFORE_DAYS days left, else a new one (kept for next time).
 */
export async function ensureCertificate(dataDir: string, names: string[], now: Date = new Date()): Promise<Certificate> {
  const wanted = normaliseNames(names);
  const file = path.join(dataDir, CERTIFICATE_FILE);
  const kept = await readKept(file);
  if (kept && sameNames(kept.names, wanted) && stillFresh(kept.cert, now)) {
    return { cert: kept.cert, key: kept.key, fingerprint: fingerprintOf(kept.cert) };
  }
  const made = await makeCertificate(wanted, now);
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.mkdir(dataDir, { recursive: true });
  await fs.writeFile(tmp, `${JSON.stringify({ cert: made.cert, key: made.key, names: wanted } satisfies Stored)}\n`, { mode: 0o600 });
  await fs.rename(tmp, file);
  return made;
}

async function readKept(file: string): Promise<Stored | null> {
  try {
    const raw = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<Stored>;
    if (typeof raw.cert !== 'string' || typeof raw.key !== 'string' || !Array.isArray(raw.names)) return null;
    new X509Certificate(raw.cert); // throws on a broken one: then a new one is made
    return { cert: raw.cert, key: raw.key, names: raw.names.filter((n): n is string => typeof n === 'string') };
  } catch {
    return null;
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().every((name, i) => name === b[i]);
}

function stillFresh(certPem: string, now: Date): boolean {
  const notAfter = new Date(new X509Certificate(certPem).validTo).getTime();
  return notAfter - now.getTime() > RENEW_BEFORE_DAYS * DAY_MS;
}

async function makeCertificate(names: string[], now: Date): Promise<Certificate> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const serial = randomBytes(16);
  serial[0]! &= 0x7f; // a positive serial number
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString('hex'),
    name: 'CN=Anima, O=Anima (this data folder)',
    notBefore: new Date(now.getTime() - DAY_MS),
    notAfter: new Date(now.getTime() + VALID_DAYS * DAY_MS),
    signingAlgorithm: alg,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      // IP names (either family) as iPAddress entries: 4 or 16 bytes (@peculiar/asn1-x509's IpConverter), as TLS clients compare them.
      new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: isIP(value) ? ('ip' as const) : ('dns' as const), value }))),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const certPem = cert.toString('pem');
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END PRIVATE KEY-----\n`;
  return { cert: certPem, key: keyPem, fingerprint: fingerprintOf(certPem) };
}
