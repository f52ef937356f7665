import path from 'node:path';
import { build, type Metafile } from 'esbuild';

// No arrows up, no cycles (issue 9): the authz engine depends on no HTTP, session or
// approvals-settings module (what it needs is passed in: lib/authz/context.ts), and users and
// groups do not import each other (what they share lives below both, in lib/actions).
const ROOT = path.resolve(__dirname, '../..');

async function inputsOf(entry: string): Promise<string[]> {
  const r = await build({ entryPoints: [path.join(ROOT, entry)], bundle: true, write: false, metafile: true, outdir: '/tmp/hdc-boundaries', platform: 'node', format: 'cjs', packages: 'external', logLevel: 'silent', tsconfig: path.join(ROOT, 'tsconfig.json') });
  return Object.keys((r.metafile as Metafile).inputs).map((p) => path.relative(ROOT, path.resolve(ROOT, p)).split(path.sep).join('/'));
}

describe('module boundaries', () => {
  it('the authz engine reaches no HTTP, session or approvals-settings module', async () => {
    const inputs = await inputsOf('lib/authz/engine.ts');
    expect(inputs).toContain('lib/authz/context.ts');
    expect(inputs.filter((p) => /^lib\/(http|approvals)\//.test(p) || p === 'lib/auth/sessions.ts' || p === 'lib/runtime.ts')).toEqual([]);
  });

  it('users and groups do not import each other', async () => {
    const users = await inputsOf('lib/users/index.ts');
    const groups = await inputsOf('lib/groups/index.ts');
    expect(users.filter((p) => p.startsWith('lib/groups/'))).toEqual([]);
    expect(groups.filter((p) => p.startsWith('lib/users/'))).toEqual([]);
  });
});
