import fs from 'node:fs';
import { stackFile } from '../../local/stack';

// Integration tests run against the stack `npm test` starts (local/test-run.ts).
export default async function globalSetup() {
  const file = stackFile((process.env.HDC_STACK_PROFILE as 'dev' | 'test') ?? 'test');
  if (!fs.existsSync(file)) throw new Error(`no running stack (${file}): run the integration tests through npm test`);
}
