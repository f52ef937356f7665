import fs from 'node:fs';
import { stackFile } from '../../local/stack';
import { contractDir } from '../support/contract-recorder';

// Integration tests run against the stack `npm test` starts (local/test-run.ts). Each run of a
// project starts its contract record afresh (tests/support/contract-recorder.ts): the tests read
// HDC_CONTRACT_DIR from the environment this process hands them.
export default async function globalSetup(_global: unknown, project: { displayName?: string | { name: string } }) {
  const file = stackFile((process.env.HDC_STACK_PROFILE as 'dev' | 'test') ?? 'test');
  if (!fs.existsSync(file)) throw new Error(`no running stack (${file}): run the integration tests through npm test`);
  const name = typeof project?.displayName === 'object' ? project.displayName.name : (project?.displayName ?? 'integration');
  const dir = contractDir(name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  process.env.HDC_CONTRACT_DIR = dir;
}
