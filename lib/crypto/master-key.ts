import { processEnvironment, type Environment } from '../config/environment';
import { loadKey } from '../secrets';

// The master key that encrypts technical-account passwords and authenticator secrets at rest.
// AWS: Secrets Manager (HDC_MASTER_KEY_SECRET_ID, a base64 32-byte key). Locally: a file
// (HDC_MASTER_KEY_FILE, mode 0600), created by the local stack.
export function loadMasterKey(env: Environment = processEnvironment()): Promise<Buffer> {
  return loadKey('master-key', { secretId: env.HDC_MASTER_KEY_SECRET_ID || undefined, file: env.HDC_MASTER_KEY_FILE || undefined }, {
    missing: 'no master key configured (HDC_MASTER_KEY_SECRET_ID or HDC_MASTER_KEY_FILE)',
    invalid: 'the master key must be 32 bytes, base64-encoded',
  });
}
