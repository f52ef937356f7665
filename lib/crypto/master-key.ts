import fs from 'node:fs';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

// The master key that encrypts technical-account passwords and authenticator secrets at rest.
// AWS: Secrets Manager (HDC_MASTER_KEY_SECRET_ID, a base64 32-byte key). Locally: a file
// (HDC_MASTER_KEY_FILE, mode 0600), created by the local stack.
let cached: Buffer | undefined;

export async function loadMasterKey(env: NodeJS.ProcessEnv = process.env): Promise<Buffer> {
  if (cached) return cached;
  let b64: string | undefined;
  if (env.HDC_MASTER_KEY_SECRET_ID) {
    const sm = new SecretsManagerClient({});
    const out = await sm.send(new GetSecretValueCommand({ SecretId: env.HDC_MASTER_KEY_SECRET_ID }));
    b64 = out.SecretString;
  } else if (env.HDC_MASTER_KEY_FILE) {
    b64 = fs.readFileSync(env.HDC_MASTER_KEY_FILE, 'utf8');
  }
  if (!b64) throw new Error('no master key configured (HDC_MASTER_KEY_SECRET_ID or HDC_MASTER_KEY_FILE)');
  const key = Buffer.from(b64.trim(), 'base64');
  if (key.length !== 32) throw new Error('the master key must be 32 bytes, base64-encoded');
  cached = key;
  return key;
}
