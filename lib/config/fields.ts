import * as z from 'zod/mini';
import { en } from 'zod/locales';
import { parseAllowedTargets } from '../outbound/policy';

// Every configuration field of the product, declared once with its default and its rule: the
// console's `Section:Key` tree and the fleet plane's environment variables, on the same field
// types. zod/mini (functions, no methods) so that a bundle carries only the checks it uses: the
// health function loads this file too.

// zod/mini carries no messages of its own: a configuration error says what was expected in English,
// as in the bundles that load the full zod
z.config(en());

// A duration is given in seconds (number, decimals allowed: 0.25) or as "hh:mm:ss"; kept internally in seconds.
const duration = (defaultSeconds: number) =>
  z._default(
    z.union([
      z.number().check(z.nonnegative()),
      z.pipe(z.string().check(z.regex(/^\d+(\.\d+)?$/)), z.transform(Number)),
      z.pipe(
        z.string().check(z.regex(/^\d{1,3}:\d{2}:\d{2}$/, 'expected seconds or hh:mm:ss')),
        z.transform((s: string) => {
          const [h, m, sec] = s.split(':').map(Number);
          return h * 3600 + m * 60 + sec;
        }),
      ),
    ]),
    defaultSeconds,
  );

const bool = (d: boolean) =>
  z._default(z.union([z.boolean(), z.pipe(z.enum(['true', 'false', 'True', 'False']), z.transform((v) => String(v).toLowerCase() === 'true'))]), d);
const int = (d: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z._default(z.pipe(z.coerce.number(), z.int().check(z.gte(min), z.lte(max))), d);

/** An http(s) origin (scheme://host[:port]); empty or blank reads as absent. */
const origin = z.pipe(
  z.pipe(
    z.optional(z.string()),
    z.transform((s: string | undefined) => (s && s.trim() ? s.trim() : undefined)),
  ).check(z.refine((s: string | undefined) => s === undefined || /^https?:\/\/[^/?#\s]+$/.test(s.replace(/\/$/, '')), 'expected an origin: http(s)://host[:port]')),
  z.transform((s: string | undefined) => (s === undefined ? undefined : new URL(s).origin)),
);

/** A text value; empty or blank reads as absent (a deployment template passes '' for "not set"). */
const optionalText = z.pipe(
  z.optional(z.string()),
  z.transform((s: string | undefined) => (s && s.trim() ? s.trim() : undefined)),
);

/**
 * The outbound allow-list (lib/outbound/policy.ts, docs/configuration.md): addresses or CIDR
 * blocks, each with an optional :port, separated by commas or spaces (a JSON file may give an
 * array); kept as its entries. Empty: only public addresses are called.
 */
const allowedTargets = z.pipe(
  z.pipe(
    z._default(z.union([z.string(), z.array(z.string())]), ''),
    z.transform((v: string | string[]) => (typeof v === 'string' ? v.split(/[\s,]+/) : v).map((s) => s.trim()).filter(Boolean)),
  ),
  z.array(z.string()).check(
    z.refine((entries: string[]) => {
      try {
        parseAllowedTargets(entries);
        return true;
      } catch {
        return false;
      }
    }, 'expected addresses or CIDR blocks, each with an optional :port (10.0.0.0/8, 192.0.2.7:8443, [fd00::1]:443), separated by commas'),
  ),
);

// ---- the console (and its password service): Section:Key, from a JSON file and the environment

// The configuration keys of the spec, defaults exactly the spec's. Keys the spec does not name
// (Session, SignIn, Authentication:StepUpWindow, Hosting) are ours and documented in docs/configuration.md.
export const configSchema = z.object({
  Hosting: z._default(
    z.object({
      Environment: z._default(z.enum(['Development', 'Production']), 'Production'),
      // the console's own origin: the only origin a state-changing request may come from; https
      // turns on Strict-Transport-Security (lib/http/browser.ts)
      PublicOrigin: origin,
      HstsMaxAge: int(31536000),
    }),
    { Environment: 'Production', PublicOrigin: undefined, HstsMaxAge: 31536000 },
  ),
  // BitlockerIdentityUpn: the BitLocker account's UPN on the console, for its delegation export only (issue 33)
  Helpdesk: z.prefault(z.object({ Enabled: bool(false), LapsIdentityUpn: z.optional(z.string()), BitlockerIdentityUpn: z.optional(z.string()) }), {}),
  PasswordService: z.prefault(
    z.object({
      LapsIdentity: z.prefault(z.object({ Upn: z.optional(z.string()), PasswordFile: z.optional(z.string()) }), {}),
      // the BitLocker account (issue 33): its own identity, rate limit and window
      BitlockerIdentity: z.prefault(z.object({ Upn: z.optional(z.string()), PasswordFile: z.optional(z.string()) }), {}),
      Domain: z.optional(z.string()),
      MaxLapsReadsPerTarget: int(5, 1, 1000),
      RateWindow: duration(600),
      MaxBitlockerReadsPerTarget: int(5, 1, 1000),
      BitlockerRateWindow: duration(600),
    }),
    {},
  ),
  // the approvals expiry schedule (serverless.yml renders it as an EventBridge rate): whole minutes
  Approvals: z.prefault(
    z.object({
      CheckInterval: duration(300).check(z.refine((s: number) => s >= 60 && s % 60 === 0, 'Approvals:CheckInterval must be whole minutes (60, 120, ... seconds)')),
      // a temporary group membership (groups.members.add.temporary, issue 33): its longest duration, in hours
      TemporaryMembershipMaxHours: int(8, 1, 168),
    }),
    {},
  ),
  Audit: z.prefault(
    z.object({
      // 0 keeps everything; 1..29 is refused (DESIGN decision 11).
      RetentionDays: int(0).check(z.refine((d: number) => d === 0 || d >= 30, 'Audit:RetentionDays must be 0 (keep all) or at least 30')),
    }),
    {},
  ),
  Authentication: z.prefault(
    z.object({
      Access: z.prefault(
        z.object({
          StepUp: z._default(z.enum(['Session', 'Deny']), 'Session'),
          AdAccountClaims: z._default(
            z.string().check(z.regex(/^\s*(username|sub|trait:[A-Za-z0-9_.-]+)(\s*,\s*(username|sub|trait:[A-Za-z0-9_.-]+))*\s*$/, 'expected a list of username, sub or trait:<name>')),
            'username,trait:windows_logins',
          ),
          // sign-in through the access platform (ours, docs/configuration.md): off without a JWKS URL
          JwksUrl: z.pipe(optionalText, z.optional(z.url())),
          Issuer: optionalText,
          Audience: optionalText,
          Header: z._default(z.string().check(z.trim(), z.toLowerCase(), z.minLength(1)), 'teleport-jwt-assertion'),
          // ours (issue 25): a Super administrator signs in through the platform only with a platform
          // role that an access mapping names; off by default (the spec's claim resolution alone)
          SuperAdministratorsRequireRoleMapping: bool(false),
        }),
        {},
      ),
      ActiveDirectory: z.prefault(z.object({ Enabled: bool(true) }), {}),
      StepUpWindow: duration(300),
    }),
    {},
  ),
  Session: z.prefault(z.object({ IdleTimeout: duration(1800), AbsoluteTimeout: duration(36000) }), {}),
  // Sign-in limits (docs/decisions.md, Console 7): two hard limits that only the failing address
  // feels, one account-wide limit that slows instead of refusing; sliding windows of FailureWindow.
  SignIn: z.prefault(
    z.object({
      MaxFailuresPerAccountAndAddress: int(5, 1),
      MaxFailuresPerAddress: int(20, 1),
      MaxFailuresPerAccount: int(10, 1),
      AccountSlowdown: duration(2),
      MaxStepUpFailures: int(5, 1),
      FailureWindow: duration(900),
    }),
    {},
  ),
  // BackupFolder: where the copy taken before migrations goes (a JSON-lines file); absent: a
  // DynamoDB on-demand backup of the table (AWS)
  Database: z.prefault(z.object({ AutoMigrate: bool(true), BackupFolder: optionalText }), {}),
  // what the console's outbound calls (the approval notifications) may reach beyond public addresses
  Outbound: z.prefault(z.object({ AllowedTargets: allowedTargets }), {}),
  Directory: z.prefault(
    z.object({
      FailedDcCooldown: duration(60),
      ConnectTimeout: duration(5),
      OperationTimeout: duration(15),
      HealthProbeInterval: duration(30),
      DiscoveryDnsServer: z.optional(z.string()),
      PageSize: int(500, 1, 5000),
      SearchMaxResults: int(5000, 1),
      MaxResults: int(200, 1),
      // hedged reads (ours, issue 28): a read unanswered after about the recent p95 of reads, held
      // within this floor and cap, goes to the next DC as well; the first answer wins
      HedgeDelayFloor: duration(0.1),
      HedgeDelayCap: duration(1),
      // directory connections one instance keeps open at most (ours, issue 28)
      MaxConnections: int(16, 1, 1000),
    }),
    {},
  ),
  // bounded concurrency (ours, issue 28): a request that cannot start its work within the budget
  // (waiting for the gateway, a function instance or a directory connection) answers 503
  // `overloaded` with Retry-After instead of piling up; a read (GET, HEAD) still waiting for the
  // directory ReadBudget after it arrived is answered the same way (reason `deadline`)
  Concurrency: z.prefault(z.object({ StartBudget: duration(2), ReadBudget: duration(3) }), {}),
});

export type Config = z.output<typeof configSchema>;

// Environment variables named by the spec that do not follow the Section__Key form.
export const NAMED_ENV: Record<string, string> = {
  HDC_LAPS_UPN: 'PasswordService:LapsIdentity:Upn',
  HDC_LAPS_PASSWORD_FILE: 'PasswordService:LapsIdentity:PasswordFile',
  HDC_BITLOCKER_UPN: 'PasswordService:BitlockerIdentity:Upn',
  HDC_BITLOCKER_PASSWORD_FILE: 'PasswordService:BitlockerIdentity:PasswordFile',
  HDC_PWD_DOMAIN: 'PasswordService:Domain',
  HDC_ENVIRONMENT: 'Hosting:Environment',
};

// Keys that were removed: ignored and reported by name at start.
export const OBSOLETE_KEYS: Record<string, string> = {
  'Authentication:Teleport:TrustSessionMfa': 'replaced by Authentication:Access:StepUp',
  'Authentication:Teleport:StepUpMaxAge': 'replaced by Authentication:Access:StepUp',
};

// Keys still accepted but that no longer do anything.
export const INERT_KEYS: Record<string, string> = {
  'Directory:Port': 'LDAPS is always port 636',
  'Directory:UseStartTls': 'only LDAPS 636 is used',
  'Helpdesk:LapsPasswordFile': 'the LAPS password is read by the password service only (PasswordService:LapsIdentity)',
};

// ---- the fleet plane: environment variables only (the spec names them; ours are in docs/fleet.md)

const list = z.pipe(
  z._default(z.string(), ''),
  z.transform((s: string) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  ),
);
const envBool = (d: boolean) =>
  z.pipe(
    z.optional(z.enum(['true', 'false', 'True', 'False', '1', '0', ''])),
    z.transform((v) => (v === undefined || v === '' ? d : v === 'true' || v === 'True' || v === '1')),
  );
const optionalString = z.pipe(
  z.optional(z.string()),
  z.transform((s: string | undefined) => (s && s.trim() ? s.trim() : undefined)),
);
const envInt = (d: number, min: number, max: number) => int(d, min, max);

export const LEVELS = ['viewer', 'operator'] as const;
export type Level = (typeof LEVELS)[number];

export const fleetEnvSchema = z
  .object({
    FLEET_TABLE: z._default(z.string().check(z.minLength(3)), 'hdc-fleet-local'),
    DYNAMODB_ENDPOINT: optionalString,
    FLEET_ADMIN_USERNAME: z._default(z.string().check(z.trim(), z.minLength(1), z.maxLength(64)), 'admin'),
    /** lifetime of a local administrator token (seconds) */
    FLEET_LOCAL_TOKEN_TTL: envInt(3600, 60, 43200),
    ACCESS_JWT_JWKS_URL: z.pipe(optionalString, z.optional(z.url())),
    ACCESS_JWT_ISSUER: optionalString,
    ACCESS_JWT_AUDIENCE: optionalString,
    ACCESS_JWT_HEADER: z._default(z.string().check(z.trim(), z.toLowerCase()), 'teleport-jwt-assertion'),
    ACCESS_JWT_ADMIN_ROLES: list,
    ACCESS_JWT_ALLOWED_ROLES: list,
    ACCESS_JWT_ALLOWED_USERS: list,
    ACCESS_JWT_CLIENT_ROLES: envBool(true),
    ACCESS_JWT_CLIENT_ROLE_LEVEL: z.pipe(
      z.pipe(
        z.optional(z.string()),
        z.transform((v: string | undefined) => (v && v.trim() ? v.trim() : 'viewer')),
      ),
      z.enum(LEVELS),
    ),
    TCTL_PATH: z._default(z.string().check(z.trim(), z.minLength(1)), 'tctl'),
    TCTL_TIMEOUT_MS: envInt(20000, 1000, 120000),
    ACCESS_AUTH_SERVER: optionalString,
    ACCESS_IDENTITY_FILE: optionalString,
    /** Machine ID: the identity file tbot keeps renewed (its destination's `identity`) */
    ACCESS_MACHINE_ID_IDENTITY: optionalString,
    ACCESS_CLUSTER_NAME: optionalString,
    DEFAULT_PROXY_ADDR: optionalString,
    /** the fleet plane's own origin: state-changing requests from any other are refused (lib/http/browser.ts) */
    FLEET_PUBLIC_ORIGIN: origin,
    /** Strict-Transport-Security max-age, sent when FLEET_PUBLIC_ORIGIN is https; 0 = never */
    FLEET_HSTS_MAX_AGE: envInt(31536000, 0, Number.MAX_SAFE_INTEGER),
    /** seals notification channel secrets (AES-256-GCM): base64 of 32 bytes (spec, Authentication 4; docs/fleet-alerts.md) */
    SECRETS_ENCRYPTION_KEY: optionalString.check(z.refine((s: string | undefined) => s === undefined || Buffer.from(s, 'base64').length === 32, 'expected base64 of 32 bytes')),
    /** consoles one poll invocation polls at the same time (docs/fleet-alerts.md) */
    FLEET_POLL_CONCURRENCY: envInt(50, 1, 500),
    /** what consoles, alert channels and the access proxy check may reach beyond public addresses (lib/outbound/policy.ts) */
    FLEET_OUTBOUND_ALLOWED_TARGETS: allowedTargets,
  })
  .check(
    z.refine((c: { ACCESS_IDENTITY_FILE?: string; ACCESS_MACHINE_ID_IDENTITY?: string }) => !(c.ACCESS_IDENTITY_FILE && c.ACCESS_MACHINE_ID_IDENTITY), {
      message: 'set ACCESS_IDENTITY_FILE or ACCESS_MACHINE_ID_IDENTITY, not both',
      path: ['ACCESS_MACHINE_ID_IDENTITY'],
    }),
    z.refine((c: { ACCESS_IDENTITY_FILE?: string; ACCESS_MACHINE_ID_IDENTITY?: string; ACCESS_AUTH_SERVER?: string }) => !((c.ACCESS_IDENTITY_FILE || c.ACCESS_MACHINE_ID_IDENTITY) && !c.ACCESS_AUTH_SERVER), {
      message: 'an identity file needs ACCESS_AUTH_SERVER (tctl --identity also requires --auth-server)',
      path: ['ACCESS_AUTH_SERVER'],
    }),
  );

export type FleetConfig = z.output<typeof fleetEnvSchema>;
