import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { account, newClient, nextCode, signedIn, stack } from '../support/stack';

// docs/api.md's worked example, as an integrator runs it (issue 30): the console's document
// fetched from the running API, a client generated from it (openapi-typescript), the example
// type-checked against it and run with openapi-fetch: sign in, search a computer, read its audit.
const ROOT = path.resolve(__dirname, '../..');
const node = (args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }) => spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 120_000, ...opts });

describe('the worked example of docs/api.md', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-api-example-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('generates a client from the served document, type-checks the example against it, and reads the audit of a computer', async () => {
    const doc = await newClient().get('/openapi/v1.json'); // Development: open to anyone
    expect(doc.status).toBe(200);
    fs.writeFileSync(path.join(dir, 'console-openapi.json'), doc.text);
    fs.copyFileSync(path.join(ROOT, 'docs/examples/computer-audit.mts'), path.join(dir, 'computer-audit.mts'));
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));

    const gen = node([path.join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), 'console-openapi.json', '-o', 'console-api.d.ts'], { cwd: dir });
    expect([gen.status, gen.stderr.includes('Error')]).toEqual([0, false]);
    const tsc = node([path.join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--target', 'es2022', '--module', 'preserve', '--moduleResolution', 'bundler', '--types', 'node', 'computer-audit.mts'], { cwd: dir });
    expect(tsc.stdout).toBe('');

    // an audit row whose target is the computer: an operator read it
    const target = stack.computers.find((c) => c.name === 'WS-STD-01')!;
    expect((await (await signedIn('op-auditor')).get(`/api/computers/${target.guid}`)).status).toBe(200);

    const run = node([path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'computer-audit.mts', 'WS-STD-01'], {
      cwd: dir,
      env: { ...process.env, HDC_CONSOLE_URL: stack.consoleUrl, HDC_USER: 'op-auditor', HDC_PASSWORD: account('op-auditor').password, HDC_CODE: await nextCode('op-auditor') },
    });
    expect([run.status, run.stderr.split('\n').filter((l) => l && !l.includes('ExperimentalWarning') && !l.includes('--trace-warnings'))]).toEqual([0, []]);
    const rows = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows[0]).toMatchObject({ event: expect.any(String), outcome: expect.any(String), at: expect.any(String) });
    expect(rows.some((r) => r.actor === 'op-auditor')).toBe(true);
  });
});
