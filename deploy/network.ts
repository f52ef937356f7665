import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';

// The network of a client's console and password service, from the stage's parameter file
// (deploy/stages/<stage>.yml, or HDC_STAGE_PARAMS): both run in the client's private subnets, each
// behind its own security group whose only egress is LDAPS to the DCs and HTTPS to the VPC
// endpoints (DynamoDB gateway, Secrets Manager and Lambda interface endpoints). serverless.yml
// and serverless.password-service.yml render it through deploy/stage-network.cjs; docs/deployment.md.

/** The local stack's stages (serverless-offline): no network, and never packaged or deployed. */
export const LOCAL_STAGES = ['local', 'test'];
/** The commands that make something deployable: they refuse a stage without network parameters. */
const BUILDING = new Set(['package', 'deploy']);

const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}-[0-9a-f]{8,17}$`), `must be a ${prefix}-… id`);
const cidr = z
  .string()
  .regex(/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/, 'must be an IPv4 CIDR (10.0.1.10/32)')
  .refine((c) => c.split(/[./]/).every((n, i) => Number(n) <= (i === 4 ? 32 : 255)), 'must be an IPv4 CIDR (10.0.1.10/32)');
const subnets = z.array(id('subnet')).min(2, 'needs at least two subnets (two availability zones)');

export const networkSchema = z
  .object({
    vpcId: id('vpc'),
    /** the domain controllers the functions reach over LDAPS (addresses as /32 or their subnets) */
    dcCidrs: z.array(cidr).min(1),
    ldapsPort: z.number().int().min(1).max(65535).default(636),
    /** private subnets of the console's functions */
    consoleSubnetIds: subnets,
    /** private subnets of the password service: a route to the DCs and none to the internet */
    passwordServiceSubnetIds: subnets,
    endpoints: z
      .object({
        /** the security group of the Secrets Manager and Lambda interface endpoints (private DNS on) */
        securityGroupId: id('sg'),
        /** the region's DynamoDB prefix list (com.amazonaws.<region>.dynamodb), routed by the gateway endpoint */
        dynamodbPrefixListId: id('pl'),
      })
      .strict(),
    /** HTTPS egress of the console's functions beyond the endpoints (notification channels, through a NAT): none by default */
    consoleHttpsEgressCidrs: z.array(cidr).default([]),
    /** the optional network stack (serverless.network.yml) that creates the VPC endpoints */
    endpointsStack: z
      .object({
        /** the VPC's CIDR: who may reach the interface endpoints */
        vpcCidr: cidr,
        /** the private subnets' route tables: the DynamoDB gateway endpoint's routes */
        routeTableIds: z.array(id('rtb')).min(1),
        /** where the interface endpoints' network interfaces live */
        subnetIds: subnets,
      })
      .strict()
      .optional(),
  })
  .strict();

/**
 * The stage's audit setting: `Audit:RetentionDays` as the console reads it (0 keeps everything,
 * otherwise at least 30). The console's functions get it as `Audit__RetentionDays`, and every
 * function's log group (the audit stream) keeps its lines at least that long (deploy/audit-log-groups.cjs).
 */
export const auditParamsSchema = z
  .object({ retentionDays: z.number().int().refine((d) => d === 0 || d >= 30, 'must be 0 (keep all) or at least 30') })
  .strict();

export const stageParamsSchema = z.object({ network: networkSchema, audit: auditParamsSchema.optional() }).strict();

export type Network = z.infer<typeof networkSchema>;
export type NetworkService = 'console' | 'password-service';

export class StageParamsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StageParamsError';
    this.stack = `${this.name}: ${message}`; // serverless prints the stack: the reason is the whole of it
  }
}

export function stageParamsFile(stage: string, env: NodeJS.ProcessEnv = process.env): string {
  return env.HDC_STAGE_PARAMS || path.join(__dirname, 'stages', `${stage}.yml`);
}

/** The stage's network parameters, or undefined when it has no parameter file. Invalid files throw, naming the key. */
export function readNetwork(stage: string, env: NodeJS.ProcessEnv = process.env): Network | undefined {
  return readStageParams(stage, env)?.network;
}

/** The stage's `audit.retentionDays`, or undefined when the stage has no parameter file or no audit section. */
export function readAuditRetentionDays(stage: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (LOCAL_STAGES.includes(stage)) return undefined;
  return readStageParams(stage, env)?.audit?.retentionDays;
}

/** CloudWatch Logs' retention periods (PutRetentionPolicy accepts only these). */
export const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const;

/**
 * A log group's retention for an audit retention: the shortest CloudWatch period that keeps the
 * lines at least as long as the audit rows; undefined (never expire) for 0 or beyond ten years.
 */
export function logGroupRetentionDays(auditRetentionDays: number): number | undefined {
  if (auditRetentionDays === 0) return undefined;
  return LOG_RETENTION_DAYS.find((d) => d >= auditRetentionDays);
}

function readStageParams(stage: string, env: NodeJS.ProcessEnv): z.infer<typeof stageParamsSchema> | undefined {
  const file = stageParamsFile(stage, env);
  if (!fs.existsSync(file)) return undefined;
  const parsed = stageParamsSchema.safeParse(YAML.parse(fs.readFileSync(file, 'utf8')) ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) =>
      i.code === 'unrecognized_keys' ? `${[...i.path, ...i.keys].join('.')}: not a parameter` : `${i.path.join('.')}: ${i.message}`,
    );
    throw new StageParamsError(`invalid stage parameters in ${path.relative(process.cwd(), file)}:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}

const SECURITY_GROUP: Record<NetworkService, string> = { console: 'ConsoleSecurityGroup', 'password-service': 'PasswordServiceSecurityGroup' };

/** The security group of one service: egress LDAPS to the DCs, HTTPS to the endpoints (and the console's extra CIDRs); no ingress. */
export function securityGroup(service: NetworkService, stage: string, n: Network) {
  const https = (extra: Record<string, string>, what: string) => ({ IpProtocol: 'tcp', FromPort: 443, ToPort: 443, Description: what, ...extra });
  return {
    Type: 'AWS::EC2::SecurityGroup',
    Properties: {
      GroupDescription: `hdc ${service} ${stage}: LDAPS to the DCs, HTTPS to the VPC endpoints`,
      VpcId: n.vpcId,
      SecurityGroupEgress: [
        ...n.dcCidrs.map((CidrIp) => ({ IpProtocol: 'tcp', FromPort: n.ldapsPort, ToPort: n.ldapsPort, CidrIp, Description: 'LDAPS to a domain controller' })),
        https({ DestinationSecurityGroupId: n.endpoints.securityGroupId }, 'Secrets Manager and Lambda interface endpoints'),
        https({ DestinationPrefixListId: n.endpoints.dynamodbPrefixListId }, 'DynamoDB gateway endpoint'),
        ...(service === 'console' ? n.consoleHttpsEgressCidrs.map((CidrIp) => https({ CidrIp }, 'notification channels')) : []),
      ],
    },
  };
}

export interface RenderedNetwork {
  /** provider.vpc; empty lists: no VPC (only rendered for print and offline, never packaged) */
  vpc: { securityGroupIds: Array<{ Ref: string }>; subnetIds: string[] };
  /** a `resources` array element; `{}` adds nothing */
  resources: { Resources?: Record<string, unknown> };
}

const NONE: RenderedNetwork = { vpc: { securityGroupIds: [], subnetIds: [] }, resources: {} };

/**
 * What serverless renders for a service and stage. A local stage has no network and cannot be
 * packaged or deployed; any other stage needs its parameter file to be packaged or deployed.
 * Other commands (print, offline) of a stage without parameters render no network.
 */
export function renderNetwork(service: NetworkService, stage: string, command: string | undefined, env: NodeJS.ProcessEnv = process.env): RenderedNetwork {
  const building = BUILDING.has(command ?? '');
  if (LOCAL_STAGES.includes(stage)) {
    if (building) throw new StageParamsError(`stage "${stage}" is the local stack's (serverless-offline): it is never packaged or deployed; name the client's stage (docs/deployment.md)`);
    return NONE;
  }
  const n = readNetwork(stage, env);
  if (!n) {
    if (!building) return NONE;
    throw new StageParamsError(
      `stage "${stage}" has no network parameters: write ${path.relative(process.cwd(), stageParamsFile(stage, env))} (vpcId, dcCidrs, consoleSubnetIds, passwordServiceSubnetIds, endpoints; see deploy/stages/sample.yml and docs/deployment.md). The ${service} runs only in the client's private subnets.`,
    );
  }
  const sg = SECURITY_GROUP[service];
  return {
    vpc: { securityGroupIds: [{ Ref: sg }], subnetIds: service === 'console' ? n.consoleSubnetIds : n.passwordServiceSubnetIds },
    resources: { Resources: { [sg]: securityGroup(service, stage, n) } },
  };
}

/**
 * The optional network stack (serverless.network.yml): the VPC endpoints both services need, for a
 * VPC that has none. Its outputs are the ids the stage file's `endpoints` names.
 */
export function renderEndpointsStack(stage: string, command: string | undefined, env: NodeJS.ProcessEnv = process.env): { Resources?: Record<string, unknown>; Outputs?: Record<string, unknown> } {
  const building = BUILDING.has(command ?? '');
  const n = LOCAL_STAGES.includes(stage) ? undefined : readNetwork(stage, env);
  if (!n?.endpointsStack) {
    if (!building) return {};
    throw new StageParamsError(`stage "${stage}" has no network.endpointsStack parameters (vpcCidr, routeTableIds, subnetIds) in ${path.relative(process.cwd(), stageParamsFile(stage, env))}: the network stack has nothing to create (docs/deployment.md)`);
  }
  const e = n.endpointsStack;
  const iface = (service: string) => ({
    Type: 'AWS::EC2::VPCEndpoint',
    Properties: {
      VpcEndpointType: 'Interface',
      VpcId: n.vpcId,
      ServiceName: { 'Fn::Sub': `com.amazonaws.\${AWS::Region}.${service}` },
      PrivateDnsEnabled: true,
      SubnetIds: e.subnetIds,
      SecurityGroupIds: [{ Ref: 'EndpointSecurityGroup' }],
    },
  });
  return {
    Resources: {
      EndpointSecurityGroup: {
        Type: 'AWS::EC2::SecurityGroup',
        Properties: {
          GroupDescription: `hdc ${stage}: interface endpoints of the VPC, HTTPS from the VPC`,
          VpcId: n.vpcId,
          SecurityGroupIngress: [{ IpProtocol: 'tcp', FromPort: 443, ToPort: 443, CidrIp: e.vpcCidr, Description: 'HTTPS from the VPC' }],
          // an endpoint answers, it never calls out: no egress (the one rule replaces the default allow-all)
          SecurityGroupEgress: [{ IpProtocol: '-1', CidrIp: '127.0.0.1/32', Description: 'no egress' }],
        },
      },
      DynamoDbEndpoint: {
        Type: 'AWS::EC2::VPCEndpoint',
        Properties: {
          VpcEndpointType: 'Gateway',
          VpcId: n.vpcId,
          ServiceName: { 'Fn::Sub': 'com.amazonaws.${AWS::Region}.dynamodb' },
          RouteTableIds: e.routeTableIds,
        },
      },
      SecretsManagerEndpoint: iface('secretsmanager'),
      LambdaEndpoint: iface('lambda'),
    },
    Outputs: {
      EndpointSecurityGroupId: { Description: 'network.endpoints.securityGroupId of the stage file', Value: { Ref: 'EndpointSecurityGroup' } },
      DynamoDbEndpointId: { Description: "the DynamoDB gateway endpoint (its prefix list: aws ec2 describe-managed-prefix-lists, com.amazonaws.<region>.dynamodb)", Value: { Ref: 'DynamoDbEndpoint' } },
    },
  };
}
