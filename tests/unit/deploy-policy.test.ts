import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LOCAL_STAGES, logGroupRetentionDays, readAuditRetentionDays, readNetwork, renderNetwork } from '../../deploy/network';
import { ensurePackaged, readTemplate, ROOT, SAMPLE_STAGE, type ServiceName } from '../../deploy/package';
import { randomBytes, createHash } from 'node:crypto';
import { loadConfig } from '../../lib/config';
import { nonceItem, signRequest } from '../../lib/password-service/link';
import { PasswordService } from '../../lib/password-service/service-side/service';
import { memoryDynamoStore, observe } from '../support/memory-store';
import { SERVICE_CHAIN } from '../../lib/password-service/link/service-chain';
import { PIN_KEY } from '../../lib/password-service/service-side/context';
import { lapsWindow } from '../../lib/password-service/service-side/service';
import { windowKey } from '../../lib/store/window';
import { securityHeaders } from '../../lib/http/browser';
import { dcHealthPartition } from '../../lib/directory/shared-health';

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
/** the name of the console's ConsolePasswordClientRole, the one principal of the service's resource policy */
const PASSWORD_CLIENT_ROLE = `hdc-console-${STAGE}-password-client`;
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

  it('has no event source, and a resource policy naming the one role that may invoke it (issue 25 #7)', () => {
    const permissions = ofType(t['password-service'], 'AWS::Lambda::Permission');
    expect(permissions.map(([, p]) => ({ ...p.Properties, Principal: text(p.Properties.Principal) }))).toEqual([
      { FunctionName: { 'Fn::GetAtt': ['PasswordServiceLambdaFunction', 'Arn'] }, Action: 'lambda:InvokeFunction', Principal: `arn:\${AWS::Partition}:iam::\${AWS::AccountId}:role/${PASSWORD_CLIENT_ROLE}` },
    ]);
    // the role so named is the console's ConsolePasswordClientRole, the invokers' role
    expect(t.console.Resources.ConsolePasswordClientRole.Properties.RoleName).toBe(PASSWORD_CLIENT_ROLE);
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
    expect(readers(/:secret:hdc-fleet\/[^/]+\/master-key-/).sort()).toEqual(['fleet/FleetPollRole', 'fleet/FleetRole']);
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
      dcHealthPartition('password-service'),
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

describe('the password service run over a table that records what it asks', () => {
  /** Every (IAM action, partition key) the service's own code sends, for each operation it serves. */
  async function serviceRequests(): Promise<Array<{ action: string; pk: string }>> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-pwdsvc-'));
    fs.writeFileSync(path.join(dir, 'laps'), 'not-a-real-password');
    fs.writeFileSync(path.join(dir, 'reset'), 'not-a-real-password');
    const store = memoryDynamoStore(`hdc-${STAGE}`);
    const caPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    // the directory settings as setup writes them; the only DC refuses connections (nothing is read)
    const settings = { domain: 'corp.example.test', baseDn: 'DC=corp,DC=example,DC=test', dcs: [{ name: 'dc1', url: 'ldaps://127.0.0.1:1' }], caPem, managedOus: [], tierOus: [], protectedGroups: [], superAdministrators: [], stepUpMode: 'password', configuredAt: new Date().toISOString(), readAccount: { user: 'r', sealedPassword: 'x' }, writeAccount: { user: 'w', sealedPassword: 'x' } };
    await store.put({ Item: { pk: 'INSTANCE', sk: 'SETTINGS', _et: 'Record', data: settings, version: 1 } });
    const asked: Array<{ action: string; pk: string }> = [];
    const ACTION: Record<string, string> = { get: 'GetItem', put: 'PutItem', delete: 'DeleteItem', query: 'Query', update: 'UpdateItem', batchGet: 'BatchGetItem', scan: 'Scan' };
    observe(store, (storeOp, input) => {
      if (storeOp === 'transactWrite') {
        for (const op of input) {
          const [kind, o] = Object.entries(op)[0] as [string, any];
          asked.push({ action: `dynamodb:${{ Put: 'PutItem', Delete: 'DeleteItem', Update: 'UpdateItem', ConditionCheck: 'ConditionCheckItem' }[kind]}`, pk: (o.Item ?? o.Key).pk });
        }
      } else {
        const pk = storeOp === 'batchGet' ? input[0]?.pk : (input.Key?.pk ?? input.Item?.pk ?? input.ExpressionAttributeValues?.[':pk'] ?? `(${storeOp})`);
        asked.push({ action: `dynamodb:${ACTION[storeOp] ?? storeOp}`, pk });
      }
    });
    const env = { HDC_LAPS_UPN: 'svc-laps@corp.example.test', HDC_LAPS_PASSWORD_FILE: path.join(dir, 'laps'), HDC_RESET_UPN: 'svc-reset@corp.example.test', HDC_RESET_PASSWORD_FILE: path.join(dir, 'reset') };
    const key = randomBytes(32);
    const service = new PasswordService(store, loadConfig(env).config, env, async () => key);
    const operator = { guid: '00000000-0000-0000-0000-00000000abcd', name: 'policy-test' };
    const guid = '5f0c3a52-7d1e-4a3b-9c1d-2e3f4a5b6c7d';
    const laps = (op: string) => ({ op, computerGuid: guid, expectedDn: 'CN=WS1,OU=Managed,DC=corp,DC=example,DC=test', vipAllowed: false, operator, correlationId: `c-${op}` });
    try {
      await service.handle({ not: 'an envelope' });
      for (const req of [
        { op: 'pin' },
        { op: 'health' },
        laps('laps.read'),
        laps('laps.expire'),
        { op: 'laps.diagnose', scopeDns: ['OU=Managed,DC=corp,DC=example,DC=test'] },
        { op: 'users.password.reset', userGuid: guid, expectedDn: 'CN=U1,OU=Managed,DC=corp,DC=example,DC=test', vipAllowed: false, mustChange: true, unlock: false, operator, correlationId: 'c-reset' },
      ]) {
        await service.handle(signRequest(key, req));
      }
      // the pin was written with this CA: the LAPS operations went past the trust check
      expect(store.items.get('PWDSVC')?.get('PIN')?.data.caSha256).toBe(createHash('sha256').update(caPem).digest('hex'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    return asked;
  }

  /** IAM, reduced to what these statements use: an Allow naming the action whose LeadingKeys condition admits the key. */
  const allows = (statements: Statement[], action: string, pk: string) =>
    statements.some((s) => {
      if (s.Effect !== 'Allow' || !list(s.Action).includes(action)) return false;
      const like_ = s.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
      const equals = s.Condition?.['ForAllValues:StringEquals']?.['dynamodb:LeadingKeys'];
      if (like_) return list(like_).some((p) => like(p, pk));
      if (equals) return list(equals).includes(pk);
      return !s.Condition;
    });

  it('asks only what its role allows, for every operation it serves', async () => {
    const asked = await serviceRequests();
    const families = new Set(asked.map((a) => a.pk.replace(/#[0-9a-f]{40}$/, '#…')));
    // every kind of item the service keeps was exercised
    expect([...families].sort()).toEqual(['AUDIT#password-service', 'AUDITMETA#password-service', 'DCHEALTH#password-service', 'INSTANCE', 'LINKNONCE', 'PWDSVC', 'WINDOW#pwdsvc-laps#…']);
    const statements = roleStatements(t['password-service'], 'PasswordServiceRole');
    const refused = asked.filter((a) => !allows(statements, a.action, a.pk));
    expect(refused).toEqual([]);
    // and the settings are read, never written
    expect(asked.filter((a) => a.pk === 'INSTANCE' && a.action !== 'dynamodb:GetItem')).toEqual([]);
  }, 60_000);
});

describe('reserved concurrency (issue 28)', () => {
  // the numbers of docs/decisions.md: at most this many instances of each function at once
  const reserved = (tpl: Template) => Object.fromEntries(ofType(tpl, 'AWS::Lambda::Function').map(([id, r]) => [id.replace(/LambdaFunction$/, ''), r.Properties.ReservedConcurrentExecutions]));
  const sum = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);
  it('caps every function of every template', () => {
    for (const s of ['console', 'password-service', 'fleet'] as const) {
      const uncapped = Object.entries(reserved(t[s])).filter(([, n]) => !(Number.isInteger(n) && n >= 1));
      expect([s, uncapped]).toEqual([s, []]);
    }
  });
  it('reserves at most 110 for a console with its password service (eight clients in a region\'s default quota of 1 000, 100 kept unreserved) and 100 for the fleet plane', () => {
    const c = reserved(t.console);
    expect([c.ConsoleComputers, c.ConsoleUsers, c.ConsoleGroups, c.ConsoleAuth, c.ConsoleApprovals, c.ApprovalsExpiry]).toEqual([10, 10, 10, 10, 5, 1]);
    expect(reserved(t['password-service'])).toEqual({ PasswordService: 10 });
    expect(sum(c) + 10).toBeLessThanOrEqual(110);
    const f = reserved(t.fleet);
    expect(f.FleetPoll).toBe(3); // one scheduled run and the queue's maximumConcurrency 2
    expect(sum(f)).toBeLessThanOrEqual(100);
    console.log(`reserved concurrency: console ${sum(c)} + password service 10, fleet plane ${sum(f)}`);
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

  it('cannot write the password service\'s pin, link nonces or LAPS rate windows', () => {
    const cfg = { PasswordService: { MaxLapsReadsPerTarget: 3, RateWindow: 3600 } } as any;
    const serviceOnly = [PIN_KEY.pk, nonceItem({ tableName: 'x' } as any, 'n').Item.pk, windowKey(lapsWindow(cfg, '5f0c3a52-7d1e-4a3b-9c1d-2e3f4a5b6c7d')).pk];
    for (const role of ['ConsoleRole', 'ConsolePasswordClientRole']) {
      const denies = roleStatements(t.console, role).filter((s) => s.Effect === 'Deny');
      for (const action of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']) {
        for (const pk of serviceOnly) {
          const denied = denies.some((s) => list(s.Action).includes(action) && list(s.Condition?.['ForAnyValue:StringLike']?.['dynamodb:LeadingKeys']).some((p) => like(p, pk)));
          expect([role, action, pk, denied]).toEqual([role, action, pk, true]);
        }
      }
      // its own audit chain's rows stay verifiable and purgeable by the console's jobs
      expect(denies.flatMap((s) => list(s.Condition?.['ForAnyValue:StringLike']?.['dynamodb:LeadingKeys'])).some((p) => like(p, `AUDIT#${SERVICE_CHAIN}`))).toBe(false);
    }
  });

  it('keeps its table with point-in-time recovery, encryption, and retained on delete or replace', () => {
    for (const [tpl, id] of [[t.console, 'HdcTable'], [t.fleet, 'FleetTable']] as const) {
      const table = tpl.Resources[id];
      expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
      expect([table.DeletionPolicy, table.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
    }
  });

  it("retains every function's log group (the audit stream) with the stage's audit retention (issue 25 #7)", () => {
    const days = readAuditRetentionDays(STAGE);
    expect(days).toBeGreaterThanOrEqual(30);
    const keep = logGroupRetentionDays(days!);
    for (const service of ['console', 'password-service', 'fleet'] as const) {
      const fns = functionsOf(t[service]);
      const groups = ofType(t[service], 'AWS::Logs::LogGroup').filter(([, g]) => String(g.Properties.LogGroupName).startsWith('/aws/lambda/'));
      expect(groups).toHaveLength(fns.length);
      // the fleet plane keeps its audit chain whole: its lines never expire
      for (const [id, g] of groups) expect([service, id, g.DeletionPolicy, g.UpdateReplacePolicy, g.Properties.RetentionInDays]).toEqual([service, id, 'Retain', 'Retain', service === 'fleet' ? undefined : keep]);
    }
    // the console's functions purge their audit rows after the same number of days
    for (const [, f] of ofType(t.console, 'AWS::Lambda::Function')) expect(f.Properties.Environment.Variables.Audit__RetentionDays).toBe(String(days));
    for (const [, f] of [...ofType(t.fleet, 'AWS::Lambda::Function'), ...ofType(t['password-service'], 'AWS::Lambda::Function')]) expect(f.Properties.Environment?.Variables?.Audit__RetentionDays).toBeUndefined();
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

describe.each([
  ['console', 'Web', ['/api/*', '/health/*', '/openapi/*']],
  ['fleet', 'FleetWeb', ['/api/*', '/health/*', '/openapi/*']],
] as const)('the %s web app', (service, prefix, apiPaths) => {
  const res = (name: string) => t[service].Resources[`${prefix}${name}`];

  it('sits in a private, encrypted bucket that only its distribution reads (origin access control)', () => {
    const bucket = res('Bucket').Properties;
    expect(bucket.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
    expect(bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
    expect(bucket.OwnershipControls.Rules).toEqual([{ ObjectOwnership: 'BucketOwnerEnforced' }]);
    const policy = res('BucketPolicy').Properties;
    expect(policy.Bucket).toEqual({ Ref: `${prefix}Bucket` });
    const [stmt, ...more] = policy.PolicyDocument.Statement;
    expect(more).toEqual([]);
    expect([stmt.Effect, stmt.Principal, stmt.Action, text(stmt.Resource)]).toEqual(['Allow', { Service: 'cloudfront.amazonaws.com' }, 's3:GetObject', `\${${prefix}Bucket.Arn}/*`]);
    expect(text(stmt.Condition.StringEquals['AWS:SourceArn'])).toBe(`arn:\${AWS::Partition}:cloudfront::\${AWS::AccountId}:distribution/\${${prefix}Distribution}`);
    expect(res('OriginAccessControl').Properties.OriginAccessControlConfig).toMatchObject({ OriginAccessControlOriginType: 's3', SigningBehavior: 'always', SigningProtocol: 'sigv4' });
  });

  it('shares its origin with the API and sends the security headers of lib/http/browser.ts on every path', () => {
    const d = res('Distribution').Properties.DistributionConfig;
    const web = d.Origins.find((o: any) => o.Id === 'web');
    expect(web.OriginAccessControlId).toEqual({ 'Fn::GetAtt': [`${prefix}OriginAccessControl`, 'Id'] });
    expect(web.S3OriginConfig).toEqual({ OriginAccessIdentity: '' });
    const api = d.Origins.find((o: any) => o.Id === 'api');
    expect(JSON.stringify(api.DomainName)).toContain('"HttpApi","ApiEndpoint"');
    expect(api.CustomOriginConfig).toEqual({ OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] });
    expect(d.CacheBehaviors.map((b: any) => b.PathPattern)).toEqual(apiPaths);
    for (const b of d.CacheBehaviors) expect(b).toMatchObject({ TargetOriginId: 'api', ViewerProtocolPolicy: 'https-only', CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad' });
    expect(d.DefaultCacheBehavior).toMatchObject({ TargetOriginId: 'web', ViewerProtocolPolicy: 'redirect-to-https' });
    for (const b of [d.DefaultCacheBehavior, ...d.CacheBehaviors]) expect(b.ResponseHeadersPolicyId).toEqual({ Ref: `${prefix}SecurityHeaders` });
    // the policy, read back as headers, is what the API sends
    const p = res('SecurityHeaders').Properties.ResponseHeadersPolicyConfig;
    const sec = p.SecurityHeadersConfig;
    const sent: Record<string, string> = {
      'content-security-policy': sec.ContentSecurityPolicy.ContentSecurityPolicy,
      'x-content-type-options': 'nosniff',
      'x-frame-options': sec.FrameOptions.FrameOption,
      'referrer-policy': sec.ReferrerPolicy.ReferrerPolicy,
      'strict-transport-security': `max-age=${sec.StrictTransportSecurity.AccessControlMaxAgeSec}${sec.StrictTransportSecurity.IncludeSubdomains ? '; includeSubDomains' : ''}`,
      ...Object.fromEntries(p.CustomHeadersConfig.Items.map((i: any) => [i.Header, i.Value])),
    };
    expect(sent).toEqual(securityHeaders({ publicOrigin: 'https://hdc.example', hstsMaxAge: 31536000 }));
    for (const h of [...Object.values(sec), ...p.CustomHeadersConfig.Items] as any[]) expect(h.Override).toBe(true);
  });
});

describe('the fleet poll', () => {
  const r = () => t.fleet.Resources;
  const poll = () => r().FleetPollLambdaFunction;

  it('runs every 60 seconds from an EventBridge rule that alone may invoke it on a schedule', () => {
    const rules = ofType(t.fleet, 'AWS::Events::Rule');
    expect(rules.map(([, x]) => [x.Properties.ScheduleExpression, x.Properties.Targets.map((tg: any) => tg.Arn)])).toEqual([['rate(1 minute)', [{ 'Fn::GetAtt': ['FleetPollLambdaFunction', 'Arn'] }]]]);
    const perms = ofType(t.fleet, 'AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === 'events.amazonaws.com');
    expect(perms.map(([, p]) => [p.Properties.FunctionName, p.Properties.SourceArn])).toEqual([[{ 'Fn::GetAtt': ['FleetPollLambdaFunction', 'Arn'] }, { 'Fn::GetAtt': [rules[0][0], 'Arn'] }]]);
  });

  it('continues a round through its queue: encrypted, short-lived, dead letters kept, one message per invocation', () => {
    const q = r().FleetPollQueue.Properties;
    expect(q.SqsManagedSseEnabled).toBe(true);
    expect(q.MessageRetentionPeriod).toBeLessThanOrEqual(300);
    expect(q.VisibilityTimeout).toBeGreaterThan(poll().Properties.Timeout);
    expect(q.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': ['FleetPollDeadLetterQueue', 'Arn'] }, maxReceiveCount: 3 });
    expect(r().FleetPollDeadLetterQueue.Properties.SqsManagedSseEnabled).toBe(true);
    const [[, mapping], ...more] = ofType(t.fleet, 'AWS::Lambda::EventSourceMapping');
    expect(more).toEqual([]);
    expect(mapping.Properties).toMatchObject({ EventSourceArn: { 'Fn::GetAtt': ['FleetPollQueue', 'Arn'] }, FunctionName: { 'Fn::GetAtt': ['FleetPollLambdaFunction', 'Arn'] }, BatchSize: 1 });
    expect(poll().Properties.Environment.Variables.FLEET_POLL_QUEUE_URL).toEqual({ Ref: 'FleetPollQueue' });
  });

  it('has its own role, the only one that may use the queue; no fleet role invokes a function', () => {
    expect(poll().Properties.Role).toEqual({ 'Fn::GetAtt': ['FleetPollRole', 'Arn'] });
    const fleetRoles = allRoles().filter((x) => x.service === 'fleet');
    const sqsUsers = fleetRoles.filter((x) => x.statements.some((s) => s.Effect === 'Allow' && list(s.Action).some((a) => a.startsWith('sqs:'))));
    expect(sqsUsers.map((x) => x.role)).toEqual(['FleetPollRole']);
    expect(sqsUsers[0].statements.filter((s) => list(s.Action).some((a) => a.startsWith('sqs:'))).flatMap(resources)).toEqual(['GetAtt:FleetPollQueue.Arn']);
    expect(fleetRoles.some((x) => x.statements.some((s) => list(s.Action).some((a) => a.startsWith('lambda:'))))).toBe(false);
    const others = functionsOf(t.fleet).filter((f) => f.id !== 'FleetPollLambdaFunction');
    expect(new Set(others.map((f) => f.role))).toEqual(new Set(['FleetRole']));
  });
});

describe('the optional network stack', () => {
  it('creates the endpoints both services reach: DynamoDB (gateway), Secrets Manager and Lambda (interface, private DNS)', () => {
    const e = network.endpointsStack!;
    const endpoints = ofType(t.network, 'AWS::EC2::VPCEndpoint').map(([, r]) => r.Properties);
    expect(endpoints.map((p) => [text(p.ServiceName), p.VpcEndpointType]).sort()).toEqual([
      ['com.amazonaws.${AWS::Region}.dynamodb', 'Gateway'],
      ['com.amazonaws.${AWS::Region}.lambda', 'Interface'],
      ['com.amazonaws.${AWS::Region}.secretsmanager', 'Interface'],
    ]);
    for (const p of endpoints) {
      expect(p.VpcId).toBe(network.vpcId);
      if (p.VpcEndpointType === 'Gateway') expect(p.RouteTableIds).toEqual(e.routeTableIds);
      else expect([p.PrivateDnsEnabled, p.SubnetIds, p.SecurityGroupIds]).toEqual([true, e.subnetIds, [{ Ref: 'EndpointSecurityGroup' }]]);
    }
    const sg = t.network.Resources.EndpointSecurityGroup.Properties;
    expect(sg.SecurityGroupIngress.map((r: any) => `${r.IpProtocol}/${r.FromPort} ${r.CidrIp}`)).toEqual([`tcp/443 ${e.vpcCidr}`]);
    expect(t.network.Outputs?.EndpointSecurityGroupId.Value).toEqual({ Ref: 'EndpointSecurityGroup' });
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

  it('hold the audit retention to Audit:RetentionDays\' rule; log groups keep at least that long (0: never expire)', () => {
    expect([0, 30, 31, 90, 100, 365, 366, 3653, 4000].map(logGroupRetentionDays)).toEqual([undefined, 30, 60, 90, 120, 365, 400, 3653, undefined]);
    const file = path.join(os.tmpdir(), `hdc-stage-audit-${process.pid}.yml`);
    const sample = fs.readFileSync(path.join(ROOT, 'deploy/stages/sample.yml'), 'utf8');
    try {
      fs.writeFileSync(file, sample.replace(/retentionDays: \d+/, 'retentionDays: 7'));
      expect(() => readAuditRetentionDays('prod', { HDC_STAGE_PARAMS: file })).toThrow(/audit\.retentionDays: must be 0 \(keep all\) or at least 30/);
      fs.writeFileSync(file, sample.replace(/\naudit:\n(  .*\n)+/, '\n'));
      expect(readAuditRetentionDays('prod', { HDC_STAGE_PARAMS: file })).toBeUndefined();
    } finally {
      fs.rmSync(file, { force: true });
    }
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
