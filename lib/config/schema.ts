import { z } from 'zod';

// A duration is given in seconds (number) or as "hh:mm:ss"; kept internally in seconds.
const duration = (defaultSeconds: number) =>
  z
    .union([
      z.number().nonnegative(),
      z.string().regex(/^\d+$/).transform(Number),
      z
        .string()
        .regex(/^\d{1,3}:\d{2}:\d{2}$/, 'expected seconds or hh:mm:ss')
        .transform((s) => {
          const [h, m, sec] = s.split(':').map(Number);
          return h * 3600 + m * 60 + sec;
        }),
    ])
    .default(defaultSeconds);

const bool = (d: boolean) =>
  z.union([z.boolean(), z.enum(['true', 'false', 'True', 'False']).transform((v) => v.toLowerCase() === 'true')]).default(d);
const int = (d: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(d);

// The configuration keys of the spec, defaults exactly the spec's. Keys the spec does not name
// (Session, SignIn, Authentication:StepUpWindow, Hosting) are ours and documented in docs/configuration.md.
export const configSchema = z.object({
  Hosting: z
    .object({
      Environment: z.enum(['Development', 'Production']).default('Production'),
      // the console's own origin (scheme://host[:port]): the only origin a state-changing request
      // may come from; https turns on Strict-Transport-Security (lib/http/browser.ts)
      PublicOrigin: z
        .string()
        .optional()
        .transform((s) => (s && s.trim() ? s.trim() : undefined))
        .refine((s) => s === undefined || /^https?:\/\/[^/?#\s]+$/.test(s.replace(/\/$/, '')), 'expected an origin: http(s)://host[:port]')
        .transform((s) => (s === undefined ? undefined : new URL(s).origin)),
      HstsMaxAge: int(31536000),
    })
    .default({ Environment: 'Production', PublicOrigin: undefined, HstsMaxAge: 31536000 }),
  Helpdesk: z
    .object({ Enabled: bool(false), LapsIdentityUpn: z.string().optional() })
    .default({ Enabled: false }),
  PasswordService: z
    .object({
      LapsIdentity: z.object({ Upn: z.string().optional(), PasswordFile: z.string().optional() }).default({}),
      Domain: z.string().optional(),
      MaxLapsReadsPerTarget: int(5, 1, 1000),
      RateWindow: duration(600),
    })
    .default({ LapsIdentity: {}, MaxLapsReadsPerTarget: 5, RateWindow: 600 }),
  // the approvals expiry schedule (serverless.yml renders it as an EventBridge rate): whole minutes
  Approvals: z
    .object({ CheckInterval: duration(300).refine((s) => s >= 60 && s % 60 === 0, 'Approvals:CheckInterval must be whole minutes (60, 120, ... seconds)') })
    .default({ CheckInterval: 300 }),
  Audit: z
    .object({
      // 0 keeps everything; 1..29 is refused (DESIGN decision 11).
      RetentionDays: int(0).refine((d) => d === 0 || d >= 30, 'Audit:RetentionDays must be 0 (keep all) or at least 30'),
    })
    .default({ RetentionDays: 0 }),
  Authentication: z
    .object({
      Access: z
        .object({
          StepUp: z.enum(['Session', 'Deny']).default('Session'),
          AdAccountClaims: z.string().default('username,trait:windows_logins'),
        })
        .default({ StepUp: 'Session', AdAccountClaims: 'username,trait:windows_logins' }),
      ActiveDirectory: z.object({ Enabled: bool(true) }).default({ Enabled: true }),
      StepUpWindow: duration(300),
    })
    .default({
      Access: { StepUp: 'Session', AdAccountClaims: 'username,trait:windows_logins' },
      ActiveDirectory: { Enabled: true },
      StepUpWindow: 300,
    }),
  Session: z
    .object({ IdleTimeout: duration(1800), AbsoluteTimeout: duration(36000) })
    .default({ IdleTimeout: 1800, AbsoluteTimeout: 36000 }),
  // Sign-in limits (docs/decisions.md, Console 7): two hard limits that only the failing address
  // feels, one account-wide limit that slows instead of refusing; sliding windows of FailureWindow.
  SignIn: z
    .object({
      MaxFailuresPerAccountAndAddress: int(5, 1),
      MaxFailuresPerAddress: int(20, 1),
      MaxFailuresPerAccount: int(10, 1),
      AccountSlowdown: duration(2),
      MaxStepUpFailures: int(5, 1),
      FailureWindow: duration(900),
    })
    .default({ MaxFailuresPerAccountAndAddress: 5, MaxFailuresPerAddress: 20, MaxFailuresPerAccount: 10, AccountSlowdown: 2, MaxStepUpFailures: 5, FailureWindow: 900 }),
  Database: z.object({ AutoMigrate: bool(true) }).default({ AutoMigrate: true }),
  Directory: z
    .object({
      FailedDcCooldown: duration(60),
      ConnectTimeout: duration(5),
      OperationTimeout: duration(15),
      HealthProbeInterval: duration(30),
      DiscoveryDnsServer: z.string().optional(),
      PageSize: int(500, 1, 5000),
      SearchMaxResults: int(5000, 1),
      MaxResults: int(200, 1),
    })
    .default({
      FailedDcCooldown: 60,
      ConnectTimeout: 5,
      OperationTimeout: 15,
      HealthProbeInterval: 30,
      PageSize: 500,
      SearchMaxResults: 5000,
      MaxResults: 200,
    }),
});

export type Config = z.infer<typeof configSchema>;

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
