import fs from 'node:fs';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

// The one secrets loader: a secret is Secrets Manager's (AWS: an id in the function's environment,
// readable only by that function's role) or a file's (local stack, containers: mode 0600, mounted
// for that one process). Callers name the source; nothing here knows which secret is which, so
// the console's bundle holds no name of the password service's secrets.

export interface SecretSource {
  /** Secrets Manager secret id (SecretString) */
  secretId?: string;
  /** a file holding the secret */
  file?: string;
}

let client: SecretsManagerClient | undefined;
const secretsManager = () => (client ??= new SecretsManagerClient({}));

/**
 * The secret's text, or undefined when the source names none. By default Secrets Manager wins
 * over a file; `preferFile` reads an existing file first (one trailing newline removed).
 */
export async function loadSecret(source: SecretSource, opts: { preferFile?: boolean } = {}): Promise<string | undefined> {
  if (opts.preferFile) {
    if (source.file && fs.existsSync(source.file)) return fs.readFileSync(source.file, 'utf8').replace(/\r?\n$/, '');
    return source.secretId ? (await secretsManager().send(new GetSecretValueCommand({ SecretId: source.secretId }))).SecretString : undefined;
  }
  if (source.secretId) return (await secretsManager().send(new GetSecretValueCommand({ SecretId: source.secretId }))).SecretString;
  if (source.file) return fs.readFileSync(source.file, 'utf8');
  return undefined;
}

const keys = new Map<string, Buffer>();

/**
 * A 32-byte key given base64 (the master key, the helpdesk link key), read once per process.
 * Errors name the key and where it was looked for, never a value.
 */
export async function loadKey(name: string, source: SecretSource, messages: { missing: string; invalid: string }): Promise<Buffer> {
  const known = keys.get(name);
  if (known) return known;
  const b64 = await loadSecret(source);
  if (!b64) throw new Error(messages.missing);
  const key = Buffer.from(b64.trim(), 'base64');
  if (key.length !== 32) throw new Error(messages.invalid);
  keys.set(name, key);
  return key;
}
