import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_END_POINT, DNSMAIN_SECRETS, InstallOptionError, parseEndPoint, type DnsMainEndPoint } from './options';

// The DNS provider's credentials: from the credentials file (one VARIABLE=value per line,
// readable by root only), else from the kept copy `acme-dns.env` in the instance secrets folder
// (mode 0600, written at install for renewals), else typed on the server. Never an argument.

export interface DnsMainCredentials {
  DNSMAIN_AK: string;
  DNSMAIN_AS: string;
  DNSMAIN_CK: string;
  DNSMAIN_END_POINT: DnsMainEndPoint;
}

export const KEPT_FILE = 'acme-dns.env';
export const secretsDir = (instanceDir: string) => path.join(instanceDir, 'secrets');
export const keptCopyPath = (instanceDir: string) => path.join(secretsDir(instanceDir), KEPT_FILE);

const VALUE = /^[A-Za-z0-9._~+/=-]{1,512}$/;

/** Parse `VARIABLE=value` lines (blank lines and # comments allowed; optional quotes). */
export function parseCredentialsText(text: string, source: string): Partial<DnsMainCredentials> {
  const out: Record<string, string> = {};
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const m = /^(?:export\s+)?([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!m) throw new InstallOptionError(`${source}:${i + 1}: expected VARIABLE=value`);
    const value = m[2].replace(/^(['"])(.*)\1$/, '$2');
    if (![...DNSMAIN_SECRETS, 'DNSMAIN_END_POINT'].includes(m[1])) throw new InstallOptionError(`${source}:${i + 1}: unknown variable ${m[1]}`);
    // the message names the line, never the value
    if (m[1] !== 'DNSMAIN_END_POINT' && !VALUE.test(value)) throw new InstallOptionError(`${source}:${i + 1}: ${m[1]} has characters a key cannot have`);
    out[m[1]] = value;
  });
  return { ...out, ...(out.DNSMAIN_END_POINT ? { DNSMAIN_END_POINT: parseEndPoint(out.DNSMAIN_END_POINT) } : {}) } as Partial<DnsMainCredentials>;
}

/** A credentials file must be a regular file readable by its owner only (mode 0600 or 0400). */
export function readCredentialsFile(file: string): Partial<DnsMainCredentials> {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    throw new InstallOptionError(`--dns-credentials-file ${file} cannot be read`);
  }
  if (!st.isFile()) throw new InstallOptionError(`--dns-credentials-file ${file} is not a file`);
  if (st.mode & 0o077) throw new InstallOptionError(`--dns-credentials-file ${file} is readable by others (mode ${(st.mode & 0o777).toString(8)}): chmod 600 it`);
  return parseCredentialsText(fs.readFileSync(file, 'utf8'), file);
}

export function complete(c: Partial<DnsMainCredentials>, endPoint?: DnsMainEndPoint): DnsMainCredentials | undefined {
  if (!c.DNSMAIN_AK || !c.DNSMAIN_AS || !c.DNSMAIN_CK) return undefined;
  return { DNSMAIN_AK: c.DNSMAIN_AK, DNSMAIN_AS: c.DNSMAIN_AS, DNSMAIN_CK: c.DNSMAIN_CK, DNSMAIN_END_POINT: endPoint ?? c.DNSMAIN_END_POINT ?? DEFAULT_END_POINT };
}

/** Write the kept copy atomically, mode 0600 from its creation (never a moment readable by others). */
export function writeKeptCopy(instanceDir: string, c: DnsMainCredentials): string {
  const dir = secretsDir(instanceDir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = keptCopyPath(instanceDir);
  const tmp = `${file}.${process.pid}.tmp`;
  const body = ['# DNS provider credentials kept by the installer for renewals (spec: DNS challenge install).', '# To replace the token: delete this file and run the installer again.', ...(['DNSMAIN_AK', 'DNSMAIN_AS', 'DNSMAIN_CK', 'DNSMAIN_END_POINT'] as const).map((k) => `${k}=${c[k]}`), ''].join('\n');
  fs.writeFileSync(tmp, body, { mode: 0o600, flag: 'wx' });
  fs.renameSync(tmp, file);
  fs.chmodSync(file, 0o600);
  return file;
}

export type Prompt = (question: string) => Promise<string>;

/**
 * The credentials for this run and where they came from. A credentials file replaces the kept
 * copy; without one the kept copy is used (renewal); without either they are typed (a terminal).
 */
export async function resolveCredentials(opts: { instanceDir: string; credentialsFile?: string; endPoint?: DnsMainEndPoint }, prompt?: Prompt): Promise<{ credentials: DnsMainCredentials; source: 'file' | 'kept' | 'typed' }> {
  if (opts.credentialsFile) {
    const c = complete(readCredentialsFile(opts.credentialsFile), opts.endPoint);
    if (!c) throw new InstallOptionError(`--dns-credentials-file must hold ${DNSMAIN_SECRETS.join(', ')}`);
    return { credentials: c, source: 'file' };
  }
  const kept = keptCopyPath(opts.instanceDir);
  if (fs.existsSync(kept)) {
    const c = complete(readCredentialsFile(kept), opts.endPoint);
    if (!c) throw new InstallOptionError(`${kept} is incomplete: delete it and run the installer again with the credentials`);
    return { credentials: c, source: 'kept' };
  }
  if (!prompt) throw new InstallOptionError(`no DNS credentials: give --dns-credentials-file <file> (readable by root only) or run the installer on a terminal to type them`);
  const typed: Partial<DnsMainCredentials> = {};
  for (const k of DNSMAIN_SECRETS) {
    const v = (await prompt(`${k}: `)).trim();
    if (!VALUE.test(v)) throw new InstallOptionError(`${k} is empty or has characters a key cannot have`);
    typed[k] = v;
  }
  return { credentials: complete(typed, opts.endPoint)!, source: 'typed' };
}
