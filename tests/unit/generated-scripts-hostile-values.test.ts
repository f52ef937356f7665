import fc from 'fast-check';
import { parse } from 'yaml';
import { clientRoleYaml } from '../../lib/fleet/client-role';
import { deploymentInstallFiles, directoryScript, teleportYaml } from '../../lib/fleet/deployment-artifacts';
import type { Deployment } from '../../lib/fleet/deployments';
import { wrapperScript } from '../../lib/fleet/upgrades/pack';
import { lapsRightsModel, renderDelegationScript } from '../../lib/delegation';
import type { InstanceSettings } from '../../lib/setup/settings';
import { shQuote } from '../../lib/scripts/quoting';
import { bashParses, ScriptSandbox, shellcheck, type Run } from '../support/script-sandbox';

// Issue 25, "Generated scripts": hostile values (line breaks, command substitutions, quotes, `;`,
// `&&`, `|`, NUL, Unicode line separators, very long) fed through every generator of a script:
// the upgrade wrapper, the deploy helper (its commands, teleport.yaml, the directory PowerShell),
// the per-client role YAML and the delegation PowerShell scripts. Shell output must parse
// (`bash -n`), pass shellcheck, and, run against stand-ins that record every command, run exactly
// what it runs for a benign value, the hostile value only ever inside one argument. PowerShell
// output (no PowerShell on Debian) must be ASCII and have the same code as for a benign value once
// string literals, here-strings and comments are set aside; YAML must read back (YAML 1.1) as the
// same strings.

const FRAGMENTS = ['\n', '\r', '\r\n', '$(touch pwned)', '`touch pwned`', "'", '"', "'\\''", ';touch pwned', '&& touch pwned', '|touch pwned', '\0', '\u2028', '\u2029', '\u0085', '#', '\\', '$HOME', '*', '~', '#>', '<#', "@'", "'@", '\u2019', '\u201c', 'Zürich', '\t', '${IFS}', '!!', '{a,b}'];
const LONG = `${'x'.repeat(5000)}\ntouch pwned`;

/** Strings made of hostile fragments and arbitrary characters, always holding at least one fragment. */
const hostile = fc
  .tuple(fc.constantFrom(...FRAGMENTS), fc.array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ unit: 'binary', maxLength: 6 })), { maxLength: 5 }))
  .map(([f, rest]) => [...rest.slice(0, 2), f, ...rest.slice(2)].join(''));

/** Every fragment alone, the long one, then `runs` generated ones. */
const samples = (runs: number, seed: number) => [...FRAGMENTS.map((f) => `a${f}b`), LONG, ...fc.sample(hostile, { numRuns: runs, seed })];

const RUNS = Number(process.env.HOSTILE_RUNS ?? 12);
// SC2016 ("expressions don't expand in single quotes"), SC1003 ("want to escape a single
// quote?", for a literal \' in the value) and SC1110-SC1112 (a typographic quote in the value)
// say that a single-quoted word holds what looks like code or a mistyped quote: what quoting a
// hostile value is for. They are the only findings a hostile value may bring; any other fails.
const QUOTED_ON_PURPOSE = ['SC2016', 'SC1003', 'SC1110', 'SC1111', 'SC1112'];

describe('shell scripts', () => {
  const sandbox = new ScriptSandbox();
  afterAll(() => sandbox.dispose());

  const noNewFiles = (run: Run, allowed: string[] = []) => expect(run.created.filter((f) => !allowed.includes(f))).toEqual([]);

  it('shellcheck is installed (a missing one fails these tests, never skips them)', () => {
    expect(() => shellcheck('#!/bin/bash\ntrue\n')).not.toThrow();
  });

  it('shQuote: any value without NUL is exactly one argument; a NUL is refused', () => {
    for (const v of [...samples(40, 1), '', "'", "''", 'a\0b'.replace('\0', '')]) {
      if (v.includes('\0')) {
        expect(() => shQuote(v)).toThrow('NUL');
        continue;
      }
      sandbox.reset();
      const run = sandbox.run(`podman ${shQuote(v)} end\n`);
      expect(run.commands).toEqual([['podman', v, 'end']]);
      noNewFiles(run);
    }
  });

  describe('the upgrade wrapper upgrade-<host>.sh', () => {
    const benign = { url: 'https://hdc.acme.test', host: 'hdc.acme.test', clientCode: 'acme', from: '1.3.0', to: '1.4.0', image: 'ghcr.io/msp/hdc:1.4.0' };
    const generatedAt = '2026-01-01T00:00:00.000Z';
    const runWrapper = (script: string) => {
      sandbox.reset({ 'inst/hdc.env': { content: 'HDC_IMAGE=x\nHDC_STORE=sqlite\n' }, 'inst/common.sh': { content: '' } });
      sandbox.recorderFile('inst/upgrade.sh');
      return sandbox.run(script, ['inst']);
    };
    const base = runWrapper(wrapperScript(benign, generatedAt));

    it('benign: parses, passes shellcheck, runs upgrade.sh with the image and nothing else', () => {
      const script = wrapperScript(benign, generatedAt);
      expect(bashParses(script)).toEqual({ ok: true, stderr: '' });
      expect(shellcheck(script)).toEqual([]);
      expect(base.status).toBe(0);
      expect(base.commands).toEqual([['dirname', expect.stringMatching(/script\.sh$/)], ['upgrade.sh', benign.image]]);
    });

    it.each(['url', 'host', 'clientCode', 'from', 'to', 'image', 'generatedAt'] as const)('a hostile %s changes nothing that runs', (field) => {
      for (const [i, v] of samples(RUNS, 7 + field.length).entries()) {
        const c = { ...benign, ...(field === 'generatedAt' ? {} : { [field]: v }) };
        const at = field === 'generatedAt' ? v : generatedAt;
        if (field === 'image' && v.includes('\0')) {
          expect(() => wrapperScript(c, at)).toThrow('NUL'); // refused, never cut
          continue;
        }
        const script = wrapperScript(c, at);
        const why = `${field} #${i}: ${JSON.stringify(v.slice(0, 80))}`;
        expect([why, bashParses(script).ok]).toEqual([why, true]);
        expect([why, shellcheck(script, { exclude: QUOTED_ON_PURPOSE })]).toEqual([why, []]);
        const run = runWrapper(script);
        expect([why, run.status]).toEqual([why, 0]);
        expect([why, run.commands]).toEqual([why, [base.commands[0], ['upgrade.sh', field === 'image' ? v : benign.image]]]);
        expect([why, run.steps.length]).toEqual([why, base.steps.length]);
        noNewFiles(run);
      }
    });
  });

  describe('the deploy helper', () => {
    const d = { id: 'b2f3c1a0-0000-4000-8000-000000000001', clientCode: 'acme', hostname: 'proxy1.corp.example.test', domain: 'corp.example.test', ldapAddress: 'dc1.corp.example.test:636' } as Deployment;
    const opts = { proxyAddr: 'proxy.msp.example.test:443', tokenFile: 'join-token' };
    const commandScript = (files: ReturnType<typeof deploymentInstallFiles>) => ['#!/usr/bin/env bash', ...files.commands, ''].join('\n');
    const runCommands = (script: string) => {
      sandbox.reset();
      return sandbox.run(script, [], 'the-join-token\n');
    };
    const base = runCommands(commandScript(deploymentInstallFiles(d, opts)));

    it('benign: the commands parse, pass shellcheck, create the data directory, write the token file and start the service', () => {
      const script = commandScript(deploymentInstallFiles(d, opts));
      expect(bashParses(script).ok).toBe(true);
      expect(shellcheck(script)).toEqual([]);
      expect(base.commands).toEqual([
        ['install', '-d', '-m', '0700', '/var/lib/teleport'],
        ['systemctl', 'enable', '--now', 'teleport'],
      ]);
      expect(base.created).toEqual(['join-token']);
    });

    it.each(['id', 'clientCode', 'hostname', 'domain', 'ldapAddress', 'proxyAddr', 'tokenFile'] as const)('a hostile %s: the same commands, YAML that reads back, PowerShell with the same code', (field) => {
      const benignPs = psSkeleton(directoryScript(d).script);
      for (const [i, v] of samples(RUNS, 11 + field.length).entries()) {
        const dd = field in d ? ({ ...d, [field]: v } as Deployment) : d;
        const oo = field in opts ? { ...opts, [field]: v } : opts;
        const why = `${field} #${i}: ${JSON.stringify(v.slice(0, 80))}`;
        if (field === 'tokenFile' && v.includes('\0')) {
          expect(() => deploymentInstallFiles(dd, oo)).toThrow('NUL');
          continue;
        }
        const script = commandScript(deploymentInstallFiles(dd, oo));
        expect([why, bashParses(script).ok]).toEqual([why, true]);
        expect([why, shellcheck(script, { exclude: QUOTED_ON_PURPOSE })]).toEqual([why, []]);
        const run = runCommands(script);
        expect([why, run.commands]).toEqual([why, base.commands]);
        expect([why, run.steps.length]).toEqual([why, base.steps.length]);
        // the token goes to the file named, and only there (a name with `/` cannot be opened: nothing written)
        noNewFiles(run, [field === 'tokenFile' ? v : 'join-token']);

        const text = teleportYaml(dd, oo);
        expect([why, text.split('\n')[0].startsWith('# teleport.yaml of ')]).toEqual([why, true]);
        const y = parse(text, { version: '1.1' });
        expect([why, [y.teleport.nodename, y.teleport.proxy_server, y.teleport.join_params.token_name, y.windows_desktop_service.ldap.addr, y.windows_desktop_service.ldap.domain, y.windows_desktop_service.labels.client_code, y.windows_desktop_service.host_labels[0].labels.client_code]]).toEqual([
          why,
          [dd.hostname, oo.proxyAddr, oo.tokenFile, dd.ldapAddress, dd.domain, dd.clientCode, dd.clientCode],
        ]);
        expect([why, Object.keys(y).sort()]).toEqual([why, ['auth_service', 'proxy_service', 'ssh_service', 'teleport', 'version', 'windows_desktop_service']]);

        const ps = directoryScript(dd).script;
        expect([why, /^[\t\r\n\x20-\x7e]*$/.test(ps)]).toEqual([why, true]);
        expect([why, psSkeleton(ps)]).toEqual([why, benignPs]);
      }
    });
  });
});

// ---- PowerShell: the code once literals and comments are set aside (a small tokenizer)

/**
 * The script with every string literal as `<S>`, here-string as `<H>`, comment as `<C>`; the
 * expression psQuote writes for a non-ASCII value (`('' + 'a' + [char]0x00FC)`) counts as one
 * literal. Single quotes are `'` and the typographic ones PowerShell also takes (U+2018-U+201B).
 */
export function psSkeleton(script: string): string {
  const SQ = "'\u2018\u2019\u201a\u201b";
  const DQ = '"\u201c\u201d\u201e';
  let out = '';
  let i = 0;
  const n = script.length;
  while (i < n) {
    const ch = script[i];
    if (script.startsWith("@'\n", i) || script.startsWith("@'\r\n", i)) {
      const end = script.indexOf("\n'@", i);
      if (end < 0) throw new Error('unterminated here-string');
      out += '<H>';
      i = end + 3;
    } else if (script.startsWith('<#', i)) {
      const end = script.indexOf('#>', i + 2);
      if (end < 0) throw new Error('unterminated block comment');
      out += '<C>';
      i = end + 2;
    } else if (ch === '#') {
      while (i < n && script[i] !== '\n' && script[i] !== '\r') i++;
      out += '<C>';
    } else if (SQ.includes(ch)) {
      i++;
      for (;;) {
        if (i >= n) throw new Error('unterminated string');
        if (SQ.includes(script[i])) {
          if (SQ.includes(script[i + 1] ?? '')) i += 2;
          else break;
        } else i++;
      }
      i++;
      out += '<S>';
    } else if (DQ.includes(ch)) {
      i++;
      while (i < n && !DQ.includes(script[i])) i += script[i] === '`' ? 2 : 1;
      if (i >= n) throw new Error('unterminated string');
      i++;
      out += '<S>';
    } else {
      out += ch;
      i++;
    }
  }
  return out.replace(/\(<S>(?: \+ (?:<S>|\[char\]0x[0-9A-F]{4}))+\)/g, '<S>');
}

describe('PowerShell scripts', () => {
  const MANAGED = { dn: 'OU=Managed,DC=corp,DC=example,DC=test', guid: '11111111-1111-1111-1111-111111111111' };
  const settings = (over: Partial<InstanceSettings>): InstanceSettings =>
    ({
      domain: 'corp.example.test',
      baseDn: 'DC=corp,DC=example,DC=test',
      dcs: [],
      caPem: '',
      readAccount: { user: 'svc-hdc-read@corp.example.test', sealedPassword: '' },
      writeAccount: { user: 'svc-hdc-write@corp.example.test', sealedPassword: '' },
      lapsIdentityUpn: 'svc-laps@corp.example.test',
      managedOus: [MANAGED],
      tierOus: [],
      protectedGroups: [],
      superAdministrators: [],
      stepUpMode: 'authenticator',
      configuredAt: '2026-01-01T00:00:00Z',
      ...over,
    }) as InstanceSettings;
  const roles = [{ id: 'laps', name: 'LAPS', permissions: ['computers.read', 'computers.laps.read'] }] as never;
  const render = (o: { upn?: string; dn?: string; refused?: string; generatedAt?: string; version?: string }) => {
    const ou = { ...MANAGED, dn: o.dn ?? MANAGED.dn };
    const model = lapsRightsModel(settings({ lapsIdentityUpn: o.upn ?? 'svc-laps@corp.example.test', managedOus: [ou] }), roles, [{ id: 'l', roleId: 'laps', scope: [ou], assignees: [] }], { legacySchema: false, otherAccounts: [] });
    const refusedIdentities = [o.refused ?? 'svc-hdc-read@corp.example.test', 'svc-hdc-write@corp.example.test'];
    return { model, refusedIdentities, script: renderDelegationScript(model, { generatedAt: o.generatedAt ?? '2026-01-01T00:00:00.000Z', refusedIdentities, version: o.version ?? '1.4.0' }) };
  };
  const benign = psSkeleton(render({}).script);

  it.each(['upn', 'dn', 'refused', 'generatedAt', 'version'] as const)('the delegation script with a hostile %s: ASCII, the same code, the model read back exactly', (field) => {
    for (const [i, v] of samples(RUNS * 2, 23 + field.length).entries()) {
      const why = `${field} #${i}: ${JSON.stringify(v.slice(0, 80))}`;
      const { model, refusedIdentities, script } = render({ [field]: v });
      expect([why, /^[\t\r\n\x20-\x7e]*$/.test(script)]).toEqual([why, true]);
      expect([why, psSkeleton(script)]).toEqual([why, benign]);
      const text = script.slice(script.indexOf("$ModelText = @'\n") + 16, script.indexOf("\n'@\n"));
      const embedded = JSON.parse(text);
      expect([why, embedded.identity, embedded.refusedIdentities, embedded.ous.map((o: { dn: string }) => o.dn)]).toEqual([why, model.identity, refusedIdentities, model.ous.map((o) => o.ou.dn)]);
    }
  });
});

describe('YAML for the cluster CLI', () => {
  it('the role with a hostile client code or name reads back (YAML 1.1) with the same strings', () => {
    for (const v of samples(60, 5)) {
      const role = parse(clientRoleYaml({ code: v, name: v }), { version: '1.1' });
      expect([role.metadata.labels.client_code, role.spec.allow.app_labels.client_code, role.spec.allow.windows_desktop_labels.client_code, role.metadata.name]).toEqual([v, v, v, `fleet-client-${v}`]);
      expect(Object.keys(role.spec.allow).sort()).toEqual(['app_labels', 'windows_desktop_labels', 'windows_desktop_logins']);
    }
  });
});
