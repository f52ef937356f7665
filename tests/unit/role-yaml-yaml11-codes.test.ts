import fc from 'fast-check';
import { parse } from 'yaml';
import { clientRoleYaml } from '../../lib/fleet/client-role';
import { CLIENT_CODE } from '../../lib/fleet/clients';
import { teleportYaml } from '../../lib/fleet/deployment-artifacts';
import type { Deployment } from '../../lib/fleet/deployments';

// Issue 25, finding 6: the per-client role YAML wrote client codes unquoted, and codes such as
// `yes`, `no`, `on`, `off`, `y` and `n` are valid client codes that a YAML 1.1 reader (the cluster
// CLI's) reads as booleans. Every string the fleet writes into YAML is now double-quoted; read
// back by a YAML 1.1 reader, each one is the same string. The agent's teleport.yaml of a proxy
// deployment is held to the same rule (its host name and client code are fields too).

const read11 = (text: string) => parse(text, { version: '1.1' });

// valid client codes that YAML 1.1 reads as something else than the string
const AMBIGUOUS = ['yes', 'no', 'on', 'off', 'y', 'n', 'true', 'false', 'null', 'nan', 'inf', '0', '1', '0755', '0x1f', '1e3', '10-1', '2024-01-01', '1-2-3', '190-20-30', '0o17', '1_000', '12-34'];

const codesIn = (role: any) => [role.metadata.labels.client_code, role.spec.allow.app_labels.client_code, role.spec.allow.windows_desktop_labels.client_code];

describe('the role YAML keeps every client code a string for a YAML 1.1 reader', () => {
  it.each(AMBIGUOUS.filter((c) => CLIENT_CODE.test(c)))('client code %s', (code) => {
    const role = read11(clientRoleYaml({ code, name: 'Acme' }));
    expect(codesIn(role)).toEqual([code, code, code]);
    expect(role.metadata.name).toBe(`fleet-client-${code}`);
    expect(role.metadata.labels['fleet-managed']).toBe('true');
  });

  it('any valid client code and any client name (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(CLIENT_CODE), fc.string({ unit: 'binary', maxLength: 200 }), (code, name) => {
        const role = read11(clientRoleYaml({ code, name }));
        expect(codesIn(role)).toEqual([code, code, code]);
        expect(role.metadata.description).toBe(`Fleet technician scope: client ${code} (${name}); RDP to its desktops and its apps only`);
      }),
      { numRuns: 300 },
    );
  });
});

describe("a deployment's teleport.yaml keeps its host name and client code strings for a YAML 1.1 reader", () => {
  it.each(AMBIGUOUS.filter((c) => CLIENT_CODE.test(c)))('%s as host name and client code', (v) => {
    const d = { id: 'd-1', clientCode: v, hostname: v, domain: 'corp.example.test', ldapAddress: 'dc1.corp.example.test:636' } as Deployment;
    const y = read11(teleportYaml(d, { proxyAddr: 'proxy.example.test:443', tokenFile: '/var/lib/teleport/join-token' }));
    expect(y.teleport.nodename).toBe(v);
    expect(y.windows_desktop_service.labels.client_code).toBe(v);
    expect(y.windows_desktop_service.host_labels[0].labels.client_code).toBe(v);
    expect(y.windows_desktop_service.enabled).toBe(true);
  });
});
