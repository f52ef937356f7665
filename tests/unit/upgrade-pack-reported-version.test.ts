import { randomBytes } from 'node:crypto';
import type { FleetAccess } from '../../lib/fleet/access';
import { createClient } from '../../lib/fleet/clients';
import { createConsole } from '../../lib/fleet/consoles';
import { readPollState, readPollStates, writePollState, nextPollState, type ConsolePollState } from '../../lib/fleet/poll/state';
import { consolePollView } from '../../lib/fleet/poll/view';
import { readConsoleStatus } from '../../lib/fleet/poll/status';
import { UNPARSEABLE } from '../../lib/fleet/poll/reported';
import type { FleetRuntime } from '../../lib/fleet/runtime';
import { generateUpgradePack } from '../../lib/fleet/upgrades/pack';
import { writeUpgradeSettings } from '../../lib/fleet/upgrades/settings';
import { memoryStore } from '../support/memory-store';
import { bashParses, ScriptSandbox, shellcheck } from '../support/script-sandbox';

// Issue 25, finding 1: the version a console reports when polled (`instance.version`, any string
// of up to 128 characters) was written unquoted into a comment of `upgrade-<host>.sh`; a newline
// in it started a new line that ran as root on the console's host. Now the poll keeps a version
// that fails its pattern as `unparseable` (also when a stored state is read), and the wrapper
// writes every value as a quoted word or inside a comment no character can end.

const INJECTED = '1.3.0\ntouch pwned-by-console';
const KEY = randomBytes(32);
const GENERATED_AT = '2026-01-01T00:00:00.000Z';

async function fleetWithOneConsole(version: string, stored: 'as polled' | 'as written before the fix') {
  const store = memoryStore();
  await createClient(store, { code: 'acme', name: 'Acme', notes: '', contacts: [] } as never);
  const c = await createConsole(store, KEY, { clientCode: 'acme', url: 'https://hdc.acme.test', token: 'a-console-token-of-16+' });
  await writeUpgradeSettings(store, { targetTag: '1.4.0', repository: 'ghcr.io/msp/hdc', alertAfterDays: 7 });
  const body = { instance: { version }, health: { status: 'healthy' }, audit: { chain: 'ok' }, directory: { dcs: [] } };
  let state: ConsolePollState;
  if (stored === 'as polled') state = nextPollState(undefined, c.id, 'r1', { ok: true, at: GENERATED_AT, ms: 5, status: readConsoleStatus(body) });
  // a state stored before the check existed holds the console's text verbatim
  else state = { consoleId: c.id, roundId: 'r1', polledAt: GENERATED_AT, ok: true, ms: 5, consecutiveFailures: 0, status: body as never };
  await writePollState(store, state);
  const rt = { store, audit: { append: async () => undefined } } as unknown as FleetRuntime;
  return { store, rt, console: c };
}

describe('a reported version cannot inject a command into an upgrade pack (issue 25, finding 1)', () => {
  const sandbox = new ScriptSandbox();
  afterAll(() => sandbox.dispose());

  it('the poll keeps a version with a line break (or any character outside the pattern) as "unparseable"', () => {
    const read = (version: unknown) => readConsoleStatus({ instance: { version }, health: { status: 'healthy' } })!.instance.version;
    expect(read(INJECTED)).toBe(UNPARSEABLE);
    for (const bad of ['1.3.0\r', '$(id)', '`id`', "1.3.0'", '1.3.0;id', '1.3.0 && id', '1.3.0|id', '1.3.0\0', '1.3.0\u2028id', 'x'.repeat(129), '']) expect(read(bad)).toBe(UNPARSEABLE);
    for (const good of ['1.3.0', 'v1.4.0-rc.1', '1.4.0+build.7', 'main', 'sha-4f2a9c1']) expect(read(good)).toBe(good);
    // health, chain, DC names and URLs are held to their own patterns
    const s = readConsoleStatus({ health: { status: 'down\nx' }, audit: { chain: 'ok;x', problem: 'hash_mismatch' }, directory: { dcs: [{ name: 'DC1 (Zürich)', url: 'ldaps://dc1.corp.test:636', state: 'up' }, { name: 'dc\n2', url: 'ldaps://dc2/$(id)', state: 'down' }] } })!;
    expect(s.health.status).toBe(UNPARSEABLE);
    expect(s.audit.chain).toBe(UNPARSEABLE);
    expect(s.audit.problem).toBe('hash_mismatch');
    expect(s.directory.dcs).toEqual([
      { name: 'DC1 (Zürich)', url: 'ldaps://dc1.corp.test:636', state: 'up' },
      { name: UNPARSEABLE, url: UNPARSEABLE, state: 'down' },
    ]);
  });

  it.each(['as polled', 'as written before the fix'] as const)('the wrapper of a console whose stored version has a newline (%s) runs only upgrade.sh', async (stored) => {
    const { store, rt, console: c } = await fleetWithOneConsole(INJECTED, stored);
    const pack = await generateUpgradePack(rt, {} as FleetAccess, { consoleIds: [c.id], format: 'zip' }, { actor: { id: 'admin', name: 'admin' } as never, correlationId: 'c1' }, Date.parse(GENERATED_AT));
    const entry = pack.clients[0].consoles[0];
    expect(entry.from).toBe(UNPARSEABLE);
    const script = entry.script;
    // no line of the script starts with the injected command; the comment says what the fleet knows
    expect(script.split('\n').some((l) => l.startsWith('touch'))).toBe(false);
    expect(script).toContain('from unparseable to 1.4.0');
    expect(bashParses(script).ok).toBe(true);
    expect(shellcheck(script)).toEqual([]);

    sandbox.reset({ 'inst/hdc.env': { content: 'HDC_IMAGE=x\nHDC_STORE=sqlite\n' }, 'inst/common.sh': { content: '' } });
    sandbox.recorderFile('inst/upgrade.sh');
    const run = sandbox.run(script, ['inst']);
    expect(run.status).toBe(0);
    // exactly what the pack means: dirname (finding the pack's folder), then the instance's upgrade.sh with the image
    expect(run.commands).toEqual([
      ['dirname', expect.stringMatching(/script\.sh$/)],
      ['upgrade.sh', 'ghcr.io/msp/hdc:1.4.0'],
    ]);
    expect(run.created).toEqual([]);

    // what the dashboard and the alerts read is the checked value too
    expect((await readPollState(store, c.id))!.status!.instance.version).toBe(UNPARSEABLE);
    expect((await readPollStates(store)).get(c.id)!.status!.instance.version).toBe(UNPARSEABLE);
    expect(await consolePollView(store, c.id)).toMatchObject({ version: UNPARSEABLE });
  });
});
