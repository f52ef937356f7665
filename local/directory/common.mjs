// common.mjs : what seed.mjs, verify.mjs and wait.mjs share about the local test directory.
import { Attribute, Change, Client } from 'ldapts';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const DATA = path.resolve(HERE, '../.data/directory');
export const SEED_FILE = path.join(DATA, 'seed.json');
export const CA_FILE = path.join(DATA, 'ca', 'ca.pem');

export const DOMAIN = 'corp.example.test';
export const NETBIOS = 'CORP';
export const BASE = 'DC=corp,DC=example,DC=test';
export const DCS = [
  { name: 'dc1', host: '127.0.0.1', url: 'ldaps://127.0.0.1:636' },
  { name: 'dc2', host: '127.0.0.2', url: 'ldaps://127.0.0.2:636' },
];
// The DCs' own DNS servers (no forwarder): DC discovery by SRV record works against either
export const DISCOVERY = { dnsServers: DCS.map((d) => d.host), srv: `_ldap._tcp.dc._msdcs.${DOMAIN}` };
export const ADMIN_UPN = `Administrator@${DOMAIN}`;

// The host name is verified against the certificate's IP SAN: no servername override.
export const tlsOptions = (caFile = CA_FILE) => ({ ca: [fs.readFileSync(caFile)] });

export async function connect(url, upn, password, { caFile, timeout = 10000 } = {}) {
  const client = new Client({ url, timeout, connectTimeout: 5000, tlsOptions: url.startsWith('ldaps:') ? tlsOptions(caFile) : undefined });
  try {
    await client.bind(upn, password);
  } catch (err) {
    await client.unbind().catch(() => {});
    throw err;
  }
  return client;
}

/** Resolves to the error a promise rejects with, or null. */
export const errorOf = (promise) => promise.then(() => null, (err) => err);

/** objectGUID bytes -> the standard string form (first three groups little-endian). */
export function guidToString(buf) {
  const h = Buffer.from(buf).toString('hex');
  const le = (s) => s.match(/../g).reverse().join('');
  return `${le(h.slice(0, 8))}-${le(h.slice(8, 12))}-${le(h.slice(12, 16))}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** objectSid bytes -> S-1-5-21-... */
export function sidToString(buf) {
  const b = Buffer.from(buf);
  const count = b[1];
  let authority = 0n;
  for (let i = 2; i < 8; i++) authority = (authority << 8n) | BigInt(b[i]);
  const subs = [];
  for (let i = 0; i < count; i++) subs.push(b.readUInt32LE(8 + 4 * i));
  return `S-${b[0]}-${authority}-${subs.join('-')}`;
}

/** Milliseconds since the epoch -> Windows FILETIME (100 ns since 1601) as a BigInt. */
export const fileTime = (ms) => BigInt(Math.round(ms)) * 10000n + 116444736000000000n;

/** First RDN value of a DN: 'CN=GG-VIP,OU=Groups,...' -> 'GG-VIP'. */
export const rdnValue = (dn) => dn.slice(dn.indexOf('=') + 1).split(/(?<!\\),/)[0].replace(/\\(.)/g, '$1');

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Case-insensitive attribute of an ldapts entry, always as an array. */
export function values(entry, name) {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === name.toLowerCase());
  if (key === undefined) return [];
  const v = entry[key];
  return Array.isArray(v) ? v : [v];
}
export const value = (entry, name) => values(entry, name)[0];

// Replication probe: a description written on one DC must be read back from the other.
export const PROBE_DN = `OU=Service Accounts,${BASE}`;
export async function checkReplication(from, to, { timeoutMs = 60000 } = {}) {
  const token = `replication probe ${from.name}->${to.name} ${Date.now()}`;
  await from.client.modify(PROBE_DN, new Change({ operation: 'replace', modification: new Attribute({ type: 'description', values: [token] }) }));
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    const { searchEntries } = await to.client.search(PROBE_DN, { scope: 'base', attributes: ['description'] });
    if (value(searchEntries[0], 'description') === token) return Date.now() - t0;
    await sleep(200);
  }
  throw new Error(`a change on ${from.name} was not visible on ${to.name} after ${timeoutMs} ms`);
}

export function adminPassword() {
  const pw = process.env.HDC_DIRECTORY_ADMIN_PASSWORD;
  if (pw) return pw;
  if (fs.existsSync(SEED_FILE)) return JSON.parse(fs.readFileSync(SEED_FILE, 'utf8')).admin.password;
  throw new Error('HDC_DIRECTORY_ADMIN_PASSWORD is not set and there is no seed.json');
}
