import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LOCAL_STAGES, readNetwork, renderNetwork } from '../../deploy/network';
import { ensurePackaged, readTemplate, ROOT, SAMPLE_STAGE, type ServiceName } from '../../deploy/package';
import { nonceItem } from '../../lib/password-service/link';
import { SERVICE_CHAIN } from '../../lib/password-service/link/service-chain';
import { PIN_KEY } from '../../lib/password-service/service-side/context';
import { lapsWindow } from '../../lib/password-service/service-side/service';
import { windowKey } from '../../lib/store/window';

// The AWS deployment as packaged (`npm run package`: CloudFormation for the sample stage, no AWS
// account): what the templates let each function reach (issue 17). The package is made once and
// reused while nothing that shapes the templates changed (deploy/package.ts keeps a stamp).

type Template = { Resources: Record<string, any>; Outputs?: Record<string, any> };
type Statement = { Sid?: string; Effect: string; Action: string | string[]; Resource: unknown; Condition?: Record<string, Record<string, string | string[]>> };

const STAGE = SAMPLE_STAGE;
const network = readNetwork(STAGE)!;
const t = {} as Record<ServiceName, Template>;

beforeAll(async () => {
  await ensurePackaged(STAGE);
  for (const s of ['console', 'password-service', 'fleet', 'network'] as const) t[s] = readTemplate(STAGE, s);
}, 600_000);

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** A resource or principal reference as text: Fn::Sub strings as written, GetAtt/Ref by logical id. */
function text(v: any): string {
  if (typeof v === 'string') return v;
  if (v?.['Fn::Sub'] !== undefined) return typeof v['Fn::Sub'] === 'string' ? v['Fn::Sub'] : text(v['Fn::Sub'][0]);
  if (v?.['Fn::GetAtt']) return `GetAtt:${list(v['Fn::GetAtt']).join('.')}`;
  if (v?.Ref) return `Ref:${v.Ref}`;
  if (v?.['Fn::Join']) return v['Fn::Join'][1].map(text).join(v['Fn::Join'][0]);
  return JSON.stringify(v);
}

const ofType = (tpl: Template, type: string) => Object.entries(tpl.Resources).filter(([, r]) => r.Type === type);

/** The statements a role grants: its inline policies and the managed policies of the same template it names. */
function roleStatements(tpl: Template, roleId: string): Statement[] {
  const role = tpl.Resources[roleId];
  expect(role?.Type).toBe('AWS::IAM::Role');
  const inline = list(role.Properties.Policies).flatMap((p: any) => list<Statement>(p.PolicyDocument.Statement));
  const managed = list(role.Properties.ManagedPolicyArns).flatMap((arn: any) => {
    const policy = arn?.Ref && tpl.Resources[arn.Ref];
    if (policy?.Type !== 'AWS::IAM::ManagedPolicy') throw new Error(`${roleId} names a policy outside its template: ${text(arn)}`);
    return list<Statement>(policy.Properties.PolicyDocument.Statement);
  });
  return [...inline, ...managed];
}

/** Every role of every template with its statements. */
function allRoles(): Array<{ service: ServiceName; role: string; statements: Statement[] }> {
  return (Object.keys(t) as ServiceName[]).flatMap((service) => ofType(t[service], 'AWS::IAM::Role').map(([role]) => ({ service, role, statements: roleStatements(t[service], role) })));
}

/** Lambda functions of a template: name, role logical id, network. */
function functionsOf(tpl: Template) {
  return ofType(tpl, 'AWS::Lambda::Function').map(([id, r]) => ({ id, name: r.Properties.FunctionName as string, role: r.Properties.Role['Fn::GetAtt'][0] as string, vpc: r.Properties.VpcConfig }));
}

const grants = (s: Statement, action: string) => s.Effect === 'Allow' && list(s.Action).includes(action);
const resources = (s: Statement) => list(s.Resource).map(text);
/** IAM's StringLike: `*` any run, `?` one character. */
const like = (pattern: string, value: string) => new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(value);

const PASSWORD_SERVICE = `hdc-password-service-${STAGE}-passwordService`;
const INVOKERS = ['consoleComputers', 'consoleDiagnostics', 'consoleUsers', 'consoleApprovals'].map((f) => `hdc-console-${STAGE}-${f}`);

describe('the password service', () => {
  it('runs in the private subnets of the stage, behind its own security group', () => {
    const [fn, ...others] = functionsOf(t['password-service']);
    expect(others).toEqual([]);
    expect(fn.name).toBe(PASSWORD_SERVICE);
    expect(fn.vpc).toEqual({ SecurityGroupIds: [{ Ref: 'PasswordServiceSecurityGroup' }], SubnetIds: network.passwordServiceSubnetIds });
  });

  it('reaches only the DCs (LDAPS) and the VPC endpoints (HTTPS): nothing on the internet, no ingress', () => {
    const sg = t['password-service'].Resources.PasswordServiceSecurityGroup;
    expect(sg.Type).toBe('AWS::EC2::SecurityGroup');
    expect(sg.Properties.VpcId).toBe(network.vpcId);
    expect(sg.Properties.SecurityGroupIngress).toBeUndefined();
    const egress = sg.Properties.SecurityGroupEgress.map((r: any) => `${r.IpProtocol}/${r.FromPort}-${r.ToPort} ${r.CidrIp ?? r.DestinationSecurityGroupId ?? r.DestinationPrefixListId}`);
    expect(egress.sort()).toEqual(
      [
        ...network.dcCidrs.map((c) => `tcp/636-636 ${c}`),
        `tcp/443-443 ${network.endpoints.securityGroupId}`,
        `tcp/443-443 ${network.endpoints.dynamodbPrefixListId}`,
      ].sort(),
    );
  });

  it('has no event source: nothing but an IAM-allowed invoke reaches it', () => {
    expect(ofType(t['password-service'], 'AWS::Lambda::Permission')).toEqual([]);
    expect(ofType(t['password-service'], 'AWS::Lambda::EventSourceMapping')).toEqual([]);
    expect(ofType(t['password-service'], 'AWS::Lambda::Url')).toEqual([]);
  });

  it('may be invoked only by the role of the console functions that call it', () => {
    const invoking = allRoles().filter((r) => r.statements.some((s) => grants(s, 'lambda:InvokeFunction') && resources(s).some((x) => x.includes('hdc-password-service'))));
    expect(invoking.map((r) => `${r.service}/${r.role}`)).toEqual(['console/ConsolePasswordClientRole']);
    const invokeOf = invoking[0].statements.filter((s) => grants(s, 'lambda:InvokeFunction'));
    expect(invokeOf.flatMap(resources)).toEqual([`arn:\${AWS::Partition}:lambda:\${AWS::Region}:\${AWS::AccountId}:function:${PASSWORD_SERVICE}`]);
    const withRole = functionsOf(t.console).filter((f) => f.role === 'ConsolePasswordClientRole');
    expect(withRole.map((f) => f.name).sort()).toEqual([...INVOKERS].sort());
  });

  it('alone reads the LAPS and reset secrets; it reads no master key', () => {
    const readers = (pattern: RegExp) =>
      allRoles()
        .filter((r) => r.statements.some((s) => grants(s, 'secretsmanager:GetSecretValue') && resources(s).some((x) => pattern.test(x))))
        .map((r) => `${r.service}/${r.role}`);
    expect(readers(/:secret:hdc\/[^/]+\/laps-/)).toEqual(['password-service/PasswordServiceRole']);
    expect(readers(/:secret:hdc\/[^/]+\/reset-/)).toEqual(['password-service/PasswordServiceRole']);
    expect(readers(/:secret:hdc\/[^/]+\/link-key-/).sort()).toEqual(['console/ConsolePasswordClientRole', 'password-service/PasswordServiceRole']);
    expect(readers(/:secret:hdc\/[^/]+\/master-key-/).sort()).toEqual(['console/ConsolePasswordClientRole', 'console/ConsoleRole']);
    expect(readers(/:secret:hdc-fleet\/[^/]+\/master-key-/)).toEqual(['fleet/FleetRole']);
    // every secret is named exactly: the stage's, with Secrets Manager's six-character suffix
    for (const r of allRoles())
      for (const s of r.statements.filter((x) => grants(x, 'secretsmanager:GetSecretValue')))
        for (const x of resources(s)) expect(x).toMatch(new RegExp(`:secret:hdc(-fleet)?/${STAGE}/[a-z-]+-\\?{6}$`));
  });

  it('touches only its own items of the table (dynamodb:LeadingKeys) and reads the directory settings', () => {
    const statements = roleStatements(t['password-service'], 'PasswordServiceRole').filter((s) => list(s.Action).some((a) => a.startsWith('dynamodb:')));
    expect(statements.length).toBeGreaterThan(0);
    const keysOf = (s: Statement) => {
      const cond = s.Condition?.['ForAllValues:StringLike'] ?? s.Condition?.['ForAllValues:StringEquals'];
      return list(cond?.['dynamodb:LeadingKeys']);
    };
    // every statement on the table carries the condition
    for (const s of statements) expect([s.Sid, keysOf(s).length > 0]).toEqual([s.Sid, true]);
    const writes = statements.filter((s) => list(s.Action).some((a) => !['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:DescribeTable'].includes(a)));
    const writable = writes.flatMap(keysOf);
    // the partition keys the service writes, from its own code
    const cfg = { PasswordService: { MaxLapsReadsPerTarget: 3, RateWindow: 3600 } } as any;
    const own = [
      PIN_KEY.pk,
      nonceItem({ tableName: 'x' } as any, 'n').Item.pk,
      windowKey(lapsWindow(cfg, '5f0c3a52-7d1e-4a3b-9c1d-2e3f4a5b6c7d')).pk,
      `AUDIT#${SERVICE_CHAIN}`,
      `AUDITMETA#${SERVICE_CHAIN}`,
    ];
    for (const pk of own) expect([pk, writable.some((p) => like(p, pk))]).toEqual([pk, true]);
    // and none of the console's
    for (const pk of ['INSTANCE', 'AUDIT#console', 'AUDITMETA#console', 'SESSION#abc', 'WINDOW#signin-account#abc', 'WINDOW#pwdsvc-lapsX', 'OPERATOR#x', 'APPROVAL#1']) {
      expect([pk, writable.some((p) => like(p, pk))]).toEqual([pk, false]);
    }
    // reads: its own items and the settings (INSTANCE) only
    const readable = statements.filter((s) => grants(s, 'dynamodb:GetItem')).flatMap(keysOf);
    expect(readable.filter((p) => !writable.includes(p))).toEqual(['INSTANCE']);
    for (const s of statements) expect(resources(s)).toEqual([`arn:\${AWS::Partition}:dynamodb:\${AWS::Region}:\${AWS::AccountId}:table/hdc-${STAGE}`]);
  });
});

describe('the console', () => {
  it('runs every function in the private subnets of the stage, behind its security group', () => {
    const fns = functionsOf(t.console);
    expect(fns.length).toBeGreaterThan(15);
    for (const f of fns) expect([f.name, f.vpc]).toEqual([f.name, { SecurityGroupIds: [{ Ref: 'ConsoleSecurityGroup' }], SubnetIds: network.consoleSubnetIds }]);
    const sg = t.console.Resources.ConsoleSecurityGroup.Properties;
    expect(sg.SecurityGroupIngress).toBeUndefined();
    const egress = sg.SecurityGroupEgress.map((r: any) => `${r.FromPort} ${r.CidrIp ?? r.DestinationSecurityGroupId ?? r.DestinationPrefixListId}`);
    expect(egress.sort()).toEqual(
      [...network.dcCidrs.map((c) => `636 ${c}`), `443 ${network.endpoints.securityGroupId}`, `443 ${network.endpoints.dynamodbPrefixListId}`, ...network.consoleHttpsEgressCidrs.map((c) => `443 ${c}`)].sort(),
    );
  });

  it('gives the functions that do not call the password service a role without invoke and without the link key', () => {
    const base = roleStatements(t.console, 'ConsoleRole');
    expect(base.some((s) => list(s.Action).some((a) => a.startsWith('lambda:')))).toBe(false);
    expect(base.flatMap(resources).some((x) => /link-key|laps|reset/.test(x))).toBe(false);
    const others = functionsOf(t.console).filter((f) => !INVOKERS.includes(f.name));
    expect(new Set(others.map((f) => f.role))).toEqual(new Set(['ConsoleRole']));
  });

  it('keeps its table with point-in-time recovery, encryption, and retained on delete or replace', () => {
    for (const [tpl, id] of [[t.console, 'HdcTable'], [t.fleet, 'FleetTable']] as const) {
      const table = tpl.Resources[id];
      expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
      expect([table.DeletionPolicy, table.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
    }
  });

  it('logs API access without bodies, headers or cookies', () => {
    for (const tpl of [t.console, t.fleet]) {
      const stage = tpl.Resources.HttpApiStage.Properties.AccessLogSettings;
      expect(stage.DestinationArn).toEqual({ 'Fn::GetAtt': ['HttpApiLogGroup', 'Arn'] });
      const vars = Object.values(JSON.parse(stage.Format) as Record<string, string>);
      expect(vars.sort()).toEqual(
        ['$context.requestId', '$context.identity.sourceIp', '$context.requestTime', '$context.httpMethod', '$context.routeKey', '$context.status', '$context.protocol', '$context.responseLength'].sort(),
      );
    }
  });
});

describe('every role', () => {
  it('names its actions: no wildcard action in any Allow, `*` resources only for the network interfaces', () => {
    for (const service of Object.keys(t) as ServiceName[]) {
      for (const [id, r] of Object.entries(t[service].Resources)) {
        const docs = r.Type === 'AWS::IAM::Role' ? roleStatements(t[service], id) : r.Type === 'AWS::IAM::ManagedPolicy' || r.Type === 'AWS::IAM::Policy' ? list<Statement>(r.Properties.PolicyDocument.Statement) : [];
        for (const s of docs.filter((x) => x.Effect === 'Allow')) {
          for (const a of list(s.Action)) expect([service, id, a, a.includes('*')]).toEqual([service, id, a, false]);
          if (resources(s).includes('*')) expect([service, id, list(s.Action).every((a) => a.startsWith('ec2:') && /NetworkInterface|Subnets|PrivateIpAddresses/.test(a))]).toEqual([service, id, true]);
        }
      }
    }
  });

  it('uses no AWS managed policy (each grant is visible in the template)', () => {
    for (const r of allRoles()) {
      const arns = list(t[r.service].Resources[r.role].Properties.ManagedPolicyArns);
      expect([r.role, arns.filter((a: any) => typeof a === 'string')]).toEqual([r.role, []]);
    }
  });
});

describe('stage parameters', () => {
  const renderWith = (stage: string, command: string | undefined, file?: string) => () => renderNetwork('console', stage, command, file ? { HDC_STAGE_PARAMS: file } : { HDC_STAGE_PARAMS: path.join(os.tmpdir(), 'hdc-no-such-stage.yml') });

  it('refuse to package or deploy a stage without network parameters, naming the file', () => {
    expect(renderWith('prod', 'package')).toThrow(/stage "prod" has no network parameters: write .*hdc-no-such-stage\.yml/);
    expect(renderWith('prod', 'deploy')).toThrow(/no network parameters/);
    // print and offline render no network
    expect(renderWith('prod', undefined)()).toEqual({ vpc: { securityGroupIds: [], subnetIds: [] }, resources: {} });
  });

  it.each(LOCAL_STAGES)('never package the local stack stage %s', (stage) => {
    expect(renderWith(stage, 'package')).toThrow(/local stack/);
    expect(renderWith(stage, 'offline')()).toEqual({ vpc: { securityGroupIds: [], subnetIds: [] }, resources: {} });
  });

  it('name a wrong or unknown key', () => {
    const file = path.join(os.tmpdir(), `hdc-stage-${process.pid}.yml`);
    const sample = fs.readFileSync(path.join(ROOT, 'deploy/stages/sample.yml'), 'utf8');
    try {
      fs.writeFileSync(file, sample.replace('vpcId: vpc-0a1b2c3d4e5f60718', 'vpcId: my-vpc').replace('ldapsPort: 636', 'ldapsPort: 636\n  ldapPort: 389'));
      expect(renderWith('prod', 'package', file)).toThrow(/network\.vpcId: must be a vpc-… id[\s\S]*network\.ldapPort: not a parameter/);
      fs.writeFileSync(file, sample.replace(/ {4}- subnet-0a1b2c3d4e5f60722\n/, ''));
      expect(renderWith('prod', 'package', file)).toThrow(/passwordServiceSubnetIds: needs at least two subnets/);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  it('make `serverless package` itself refuse such a stage, before building anything', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/serverless/bin/serverless.js'), 'package', '-c', 'serverless.password-service.yml', '--stage', 'nowhere', '--package', path.join(os.tmpdir(), 'hdc-nowhere')], {
      cwd: ROOT,
      env: { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off' },
      encoding: 'utf8',
    });
    expect(r.status).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain('stage "nowhere" has no network parameters: write deploy/stages/nowhere.yml');
    expect(fs.existsSync(path.join(os.tmpdir(), 'hdc-nowhere'))).toBe(false);
  }, 60_000);
});
