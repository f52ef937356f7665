import { z } from 'zod';
import { channelAnswer } from '../channel';
import { noContent, type ErrorCodes } from '../../http/answers';

// The fleet plane's answers (its routes in functions/fleet): proxies and the access platform,
// alerts and channels, the register (clients, consoles, technicians), join tokens and
// deployments, upgrades, the audit, the caller.

const level = z.enum(['viewer', 'operator']);

// ---- the caller
export const localLogin = z.object({ token: z.string(), expiresAt: z.string(), username: z.string() }).meta({ id: 'LocalLogin', description: "the local administrator's bearer token" });
export const me = z
  .object({
    username: z.string(),
    method: z.enum(['local', 'access']),
    admin: z.boolean(),
    scope: z.union([z.object({ all: z.literal(true) }), z.object({ all: z.literal(false), clients: z.array(z.object({ code: z.string(), level, sources: z.array(z.enum(['assignment', 'role'])) })) })]),
  })
  .meta({ id: 'FleetCaller' });

// ---- proxies and the access platform
const nodeStatus = z.enum(['online', 'slow', 'unreachable', 'locked']);
const nodeRowShape = {
  id: z.string(),
  hostname: z.string(),
  kind: z.enum(['gateway', 'proxy', 'auth', 'app', 'ssh', 'other']),
  clientCode: z.string().nullable(),
  clientName: z.string().nullable(),
  clientCodes: z.array(z.string()),
  shared: z.boolean(),
  version: z.string().nullable(),
  lastSeen: z.string().nullable(),
  status: nodeStatus,
  networkStatus: z.enum(['online', 'slow', 'unreachable']),
  locked: z.boolean(),
  updateNeeded: z.boolean(),
  incompatible: z.boolean(),
  windowsServers: z.number(),
};
export const nodeRow = z.object(nodeRowShape).meta({ id: 'ProxyRow' });
export const nodes = z.object({
  clusterVersion: z.string().nullable(),
  readAt: z.string(),
  nodes: z.array(nodeRow),
  summary: z.object({ total: z.number(), online: z.number(), slow: z.number(), unreachable: z.number(), locked: z.number(), outdated: z.number() }),
  groups: z.array(z.object({ clientCode: z.string().nullable(), clientName: z.string().nullable(), count: z.number(), nodeIds: z.array(z.string()) })).optional(),
});
export const nodeDetail = z
  .object({
    ...nodeRowShape,
    services: z.array(z.string()),
    desktops: z.array(z.object({ name: z.string(), addr: z.string(), domain: z.string(), nonAd: z.boolean(), connectUrl: z.string().nullable() })),
    locks: z.array(z.object({ name: z.string(), message: z.string(), expires: z.string().nullable(), createdBy: z.string().nullable(), createdAt: z.string().nullable() })),
  })
  .meta({ id: 'ProxyDetail' });
export const locked = z.object({ locked: z.literal(true), lockName: z.string().nullable(), pending: z.literal(true).optional() });
export const unlocked = z.object({ locked: z.literal(false), removed: z.array(z.string()) });
export const gateways = z.object({ gateways: z.array(nodeRow), readAt: z.string() });
export const autoUpdate = z.object({
  mode: z.string().nullable(),
  toolsMode: z.string().nullable(),
  targetVersion: z.string().nullable(),
  startVersion: z.string().nullable(),
  schedule: z.string().nullable(),
  strategy: z.string().nullable(),
  rollout: z
    .object({
      state: z.string().nullable(),
      startTime: z.string().nullable(),
      groups: z.array(
        z.object({
          name: z.string(),
          state: z.string().nullable(),
          startTime: z.string().nullable(),
          lastUpdateTime: z.string().nullable(),
          lastUpdateReason: z.string().nullable(),
          days: z.array(z.string()),
          startHour: z.number().nullable(),
          presentCount: z.number().nullable(),
          upToDateCount: z.number().nullable(),
        }),
      ),
    })
    .nullable(),
  warnings: z.array(z.object({ code: z.enum(['resource_missing', 'access_denied']), resource: z.string() })),
  /** each registered client's update group `client-<code>` the rollout does not hold (its agents are never updated automatically); null when the rollout could not be read */
  notScheduled: z.array(z.object({ name: z.string(), clientCode: z.string() })).nullable(),
});

// ---- alerts
const alertKind = z.enum([
  'proxy_unreachable',
  'identity_expiring',
  'identity_not_renewed',
  'console_down',
  'console_audit_broken',
  'console_dc_down',
  'console_upgrade_overdue',
  'failed_logins_spike',
  'certificate_expiring',
]);
const severity = z.enum(['warning', 'critical']);
const alertShape = {
  key: z.string(),
  kind: alertKind,
  severity,
  clientCode: z.string().optional(),
  subject: z.string(),
  params: z.record(z.string(), z.unknown()),
  link: z.string(),
  firedAt: z.string(),
  resolvedAt: z.string().optional(),
  updatedAt: z.string(),
  acknowledged: z.object({ by: z.string(), at: z.string(), comment: z.string() }).optional(),
};
export const alert = z.object(alertShape).meta({ id: 'Alert' });
export const silence = z
  .object({
    id: z.string(),
    kind: alertKind.optional(),
    clientCode: z.string().optional(),
    consoleId: z.string().optional(),
    endsAt: z.string(),
    comment: z.string(),
    createdAt: z.string(),
    createdBy: z.string(),
  })
  .meta({ id: 'Silence' });
export const alerts = z.object({
  active: z.array(z.object({ ...alertShape, consoleId: z.string().optional(), silencedBy: z.string().nullable() })),
  groups: z.array(
    z.object({
      id: z.string(),
      kind: alertKind,
      label: z.string(),
      clientCode: z.string().nullable(),
      severity,
      count: z.number(),
      acknowledged: z.number(),
      silenced: z.number(),
      lastFiredAt: z.string(),
      keys: z.array(z.string()),
    }),
  ),
  silences: z.array(silence),
  history: z.array(
    z.object({
      id: z.string(),
      at: z.string(),
      event: z.enum(['fired', 'resolved', 'test']),
      alert: alert.nullable(),
      channelId: z.string().optional(),
      quiet: z.enum(['acknowledged', 'silenced']).optional(),
      /** administrators only */
      deliveries: z.array(z.object({ channelId: z.string(), name: z.string(), type: z.string(), ok: z.boolean(), status: z.number().optional(), error: z.string().optional(), at: z.string() })).optional(),
    }),
  ),
  lastEvaluationAt: z.string().nullable(),
  round: z.object({ id: z.string(), startedAt: z.string(), completedAt: z.string().nullable(), consoles: z.number().nullable(), durationMs: z.number().nullable() }).nullable(),
});
export const channel = channelAnswer('AlertChannel');
export const channels = z.object({ channels: z.array(channel) });
export const alertSettings = z.object({ failedLoginsThreshold: z.number() });
export const alertSettingsView = z.object({ failedLoginsThreshold: z.number(), channels: z.array(channel) });
/** A channel's URL under the outbound policy; its secrets need the key (lib/channels, lib/fleet/alerts/channels.ts). */
export const channelErrors: ErrorCodes = { 400: ['https_required', 'target_refused', 'url_required', 'validation_failed'], 503: ['secrets_key_missing'] };
/** A channel or a silence removed. */
export const deleted = noContent('Deleted');
export const silenceEnded = noContent('The silence ended');
export const channelTested = z.object({ ok: z.boolean(), status: z.number().optional(), error: z.string().optional() });

// ---- the register
const contact = z.object({ name: z.string(), email: z.string().optional(), phone: z.string().optional(), role: z.string().optional() });
const clientShape = { code: z.string(), name: z.string(), notes: z.string(), contacts: z.array(contact), createdAt: z.string(), updatedAt: z.string() };
export const client = z.object(clientShape).meta({ id: 'Client' });
export const clients = z.object({ clients: z.array(z.object({ ...clientShape, level: z.enum(['admin', 'viewer', 'operator']).optional() })) });
export const accessRole = z.object({ name: z.string(), yaml: z.string() });
export const accessRoleApplied = z.object({ name: z.string(), yaml: z.string(), outcome: z.enum(['created', 'refreshed', 'replaced']) });

const consoleShape = { id: z.string(), clientCode: z.string(), url: z.string(), ca: z.string().nullable(), tokenSet: z.boolean(), createdAt: z.string(), updatedAt: z.string() };
/** A console as registered: its URL and CA, whether a token is set (never the token). */
export const consoleView = z.object(consoleShape).meta({ id: 'Console' });
const pollShape = {
  polled: z.boolean(),
  polledAt: z.string().optional(),
  ok: z.boolean().optional(),
  error: z.string().optional(),
  httpStatus: z.number().optional(),
  consecutiveFailures: z.number().optional(),
  lastSuccessAt: z.string().nullable().optional(),
  version: z.string().nullable().optional(),
  health: z.string().nullable().optional(),
};
const pollSummary = z.object(pollShape).meta({ id: 'PollSummary', description: "the console's last poll in a few fields" });
export const consoleWithPoll = z
  .object({ ...consoleShape, version: z.string().nullable(), drift: z.enum(['unknown', 'up_to_date', 'behind']).nullable(), poll: pollSummary })
  .meta({ id: 'ConsoleWithPoll' });
export const consoles = z.object({ consoles: z.array(consoleWithPoll) });
/** A console's last poll (`polled: false` before the first). */
export const consolePoll = z.union([
  z.object({ consoleId: z.string(), polled: z.literal(false) }),
  z.object({
    consoleId: z.string(),
    ...pollShape,
    ms: z.number(),
    audit: z.object({ chain: z.string().nullable(), failedLogins24h: z.number().nullable(), witnessedSeq: z.number().nullable(), rewriteDetectedAt: z.string().nullable() }).nullable(),
    dcs: z.array(z.object({ name: z.string(), state: z.string(), url: z.string().optional() })),
    certificate: z.object({ validTo: z.string(), subject: z.string(), readAt: z.string() }).nullable(),
  }),
]).meta({ id: 'ConsolePoll' });

const assignment = z.object({ username: z.string(), clients: z.array(z.object({ code: z.string(), level })), updatedAt: z.string().optional() }).meta({ id: 'TechnicianAssignment' });
export const technicians = z.object({ technicians: z.array(assignment), clientRolesEnabled: z.boolean(), clientRoleLevel: level });
export const technicianSaved = assignment;

// ---- join tokens and deployments
export const joinTokenCreated = z
  .object({ token: z.string(), tokenId: z.string(), expires: z.string(), roles: z.array(z.string()), type: z.enum(['app', 'windowsdesktop', 'node']), clientCode: z.string().nullable() })
  .meta({ id: 'JoinTokenCreated', description: 'the join token, shown once' });
export const joinTokens = z.object({
  tokens: z.array(z.object({ tokenId: z.string(), roles: z.array(z.string()), labels: z.record(z.string(), z.string()), clientCode: z.string().nullable(), deploymentId: z.string().nullable(), expires: z.string().nullable() })),
});
export const consoleBundle = z.object({ clientCode: z.string(), appName: z.string(), consoleUrl: z.string(), files: z.array(z.object({ path: z.string(), content: z.string() })) });
/** The cluster-side files of a new client (POST /api/bundles/cluster). */
export const clusterBundle = z.object({ clientCode: z.string(), role: z.string(), updateGroup: z.string(), appName: z.string(), files: z.array(z.object({ path: z.string(), content: z.string() })) });
/** A console's registration as the fleet plane holds and polls it (/api/hdc/*); never its token. */
export const consoleRegistration = z
  .object({
    id: z.string(),
    clientCode: z.string(),
    clientName: z.string().nullable(),
    consoleUrl: z.string(),
    statusUrl: z.string(),
    appName: z.string(),
    clientRole: z.string(),
    tokenSet: z.boolean(),
    ca: z.object({ subject: z.string(), validTo: z.string(), fingerprint256: z.string() }).nullable(),
    registeredAt: z.string(),
    updatedAt: z.string(),
    version: z.string().nullable(),
    drift: z.enum(['unknown', 'up_to_date', 'behind']).nullable(),
    poll: pollSummary,
  })
  .meta({ id: 'ConsoleRegistration' });
export const consoleRegistrations = z.object({ consoles: z.array(consoleRegistration) });
export const deployment = z
  .object({
    id: z.string(),
    clientCode: z.string(),
    state: z.enum(['generated', 'validated', 'finished', 'completed']),
    tokenId: z.string(),
    hostname: z.string(),
    domain: z.string(),
    ldapAddress: z.string(),
    tokenExpires: z.string(),
    tokenExpired: z.boolean(),
    revocation: z.enum(['pending', 'revoked', 'failed']),
    createdAt: z.string(),
    createdBy: z.string(),
    updatedAt: z.string(),
    validatedAt: z.string().optional(),
    problems: z.array(z.string()).optional(),
    directoryOutputAt: z.string().optional(),
    finishedAt: z.string().optional(),
    desktopSeenAt: z.string().optional(),
    agent: z.object({ id: z.string(), hostname: z.string(), desktops: z.number() }).optional(),
    completedAt: z.string().optional(),
  })
  .meta({ id: 'Deployment' });
export const deployments = z.object({ deployments: z.array(deployment) });
export const deploymentGenerated = z.object({ deployment, joinToken: z.object({ token: z.string(), tokenId: z.string(), expires: z.string(), roles: z.array(z.string()), file: z.string() }) });
export const deploymentValidated = z.object({ valid: z.boolean(), problems: z.array(z.string()), deployment });
export const deploymentPreview = z.object({ files: z.array(z.object({ path: z.string(), mode: z.string(), content: z.string() })), commands: z.array(z.string()), proxyAddressKnown: z.boolean(), deployment });
export const deploymentDirectory = z.object({ serviceAccount: z.string(), steps: z.array(z.string()), script: z.string(), deployment });
export const deploymentFinished = z.object({ deployment });
export const deploymentChecked = z.object({ seen: z.boolean(), revoked: z.boolean(), deployment });

// ---- upgrades
const drift = z.enum(['unknown', 'up_to_date', 'behind']);
export const upgradeSettings = z.object({ targetTag: z.string().nullable(), repository: z.string().nullable(), alertAfterDays: z.number(), updatedAt: z.string().optional(), updatedBy: z.string().optional() });
export const upgrades = z.object({
  target: z.object({ tag: z.string(), repository: z.string().nullable() }).nullable(),
  settings: z.object({ targetTag: z.string().nullable(), repository: z.string().nullable(), alertAfterDays: z.number(), updatedAt: z.string().nullable(), updatedBy: z.string().nullable() }),
  plans: z.array(
    z.object({
      consoleId: z.string(),
      clientCode: z.string(),
      url: z.string(),
      from: z.string().nullable(),
      to: z.string(),
      image: z.string(),
      plannedAt: z.string(),
      state: z.enum(['pending', 'overdue', 'upgraded']),
      upgradedAt: z.string().nullable(),
      currentVersion: z.string().nullable(),
      overdueSince: z.string().nullable(),
    }),
  ),
  progress: z.object({ planned: z.number(), upgraded: z.number(), pending: z.number(), overdue: z.number() }),
  consoles: z.object({ up_to_date: z.number(), behind: z.number(), unknown: z.number() }).nullable(),
});
export const upgradePack = z
  .object({
    generatedAt: z.string(),
    target: z.object({ tag: z.string(), repository: z.string().nullable(), image: z.string() }),
    clients: z.array(
      z.object({
        code: z.string(),
        name: z.string(),
        consoles: z.array(z.object({ id: z.string(), url: z.string(), host: z.string(), from: z.string().nullable(), to: z.string(), drift, plannedAt: z.string(), newlyPlanned: z.boolean(), commands: z.array(z.string()) })),
      }),
    ),
    leftOut: z.array(z.object({ id: z.string(), reason: z.literal('up_to_date') })),
  })
  .meta({ id: 'UpgradePack' });

// ---- the audit
export const auditEntries = z.object({
  entries: z.array(
    z
      .object({
        seq: z.number(),
        at: z.string(),
        id: z.string(),
        event: z.string(),
        outcome: z.string(),
        actor: z.object({ id: z.string().optional(), name: z.string().optional(), provider: z.string().optional(), ip: z.string().optional() }).optional(),
        target: z.object({ id: z.string().optional(), name: z.string().optional(), dn: z.string().optional(), kind: z.string().optional() }).optional(),
        client: z.string().optional(),
        reason: z.string().optional(),
        ticket: z.string().optional(),
        correlationId: z.string().optional(),
        details: z.record(z.string(), z.unknown()).optional(),
      })
      .meta({ id: 'FleetAuditEntry' }),
  ),
  scannedLimit: z.number().optional(),
});
export const auditVerified = z.object({
  ok: z.boolean(),
  checked: z.number(),
  firstBadSeq: z.number().optional(),
  problem: z.enum(['hash_mismatch', 'link_broken', 'missing_row', 'head_mismatch', 'checkpoint_mismatch', 'signature_invalid']).optional(),
});
