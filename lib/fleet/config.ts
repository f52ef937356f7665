import { z } from 'zod';

// The fleet plane's configuration: environment variables only (the spec names them; ours are
// documented in docs/fleet.md). Validated once at cold start; an invalid value fails the start.

const list = z
  .string()
  .default('')
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );
const bool = (d: boolean) =>
  z
    .enum(['true', 'false', 'True', 'False', '1', '0', ''])
    .optional()
    .transform((v) => (v === undefined || v === '' ? d : v === 'true' || v === 'True' || v === '1'));
const optionalString = z
  .string()
  .optional()
  .transform((s) => (s && s.trim() ? s.trim() : undefined));

export const LEVELS = ['viewer', 'operator'] as const;
export type Level = (typeof LEVELS)[number];

export const fleetEnvSchema = z
  .object({
    FLEET_TABLE: z.string().min(3).default('hdc-fleet-local'),
    DYNAMODB_ENDPOINT: optionalString,
    FLEET_ADMIN_USERNAME: z.string().trim().min(1).max(64).default('admin'),
    /** lifetime of a local administrator token (seconds) */
    FLEET_LOCAL_TOKEN_TTL: z.coerce.number().int().min(60).max(43200).default(3600),
    ACCESS_JWT_JWKS_URL: optionalString.pipe(z.url().optional()),
    ACCESS_JWT_ISSUER: optionalString,
    ACCESS_JWT_AUDIENCE: optionalString,
    ACCESS_JWT_HEADER: z.string().trim().toLowerCase().default('teleport-jwt-assertion'),
    ACCESS_JWT_ADMIN_ROLES: list,
    ACCESS_JWT_ALLOWED_ROLES: list,
    ACCESS_JWT_ALLOWED_USERS: list,
    ACCESS_JWT_CLIENT_ROLES: bool(true),
    ACCESS_JWT_CLIENT_ROLE_LEVEL: z
      .string()
      .optional()
      .transform((v) => (v && v.trim() ? v.trim() : 'viewer'))
      .pipe(z.enum(LEVELS)),
    TCTL_PATH: z.string().trim().min(1).default('tctl'),
    TCTL_TIMEOUT_MS: z.coerce.number().int().min(1000).max(120000).default(20000),
    ACCESS_AUTH_SERVER: optionalString,
    ACCESS_IDENTITY_FILE: optionalString,
    /** Machine ID: the identity file tbot keeps renewed (its destination's `identity`) */
    ACCESS_MACHINE_ID_IDENTITY: optionalString,
    ACCESS_CLUSTER_NAME: optionalString,
    DEFAULT_PROXY_ADDR: optionalString,
    /** the fleet plane's own origin: state-changing requests from any other are refused (lib/http/browser.ts) */
    FLEET_PUBLIC_ORIGIN: optionalString
      .refine((s) => s === undefined || /^https?:\/\/[^/?#\s]+$/.test(s.replace(/\/$/, '')), 'expected an origin: http(s)://host[:port]')
      .transform((s) => (s === undefined ? undefined : new URL(s).origin)),
    /** Strict-Transport-Security max-age, sent when FLEET_PUBLIC_ORIGIN is https; 0 = never */
    FLEET_HSTS_MAX_AGE: z.coerce.number().int().min(0).default(31536000),
    /** seals notification channel secrets (AES-256-GCM): base64 of 32 bytes (spec, Authentication 4) */
    SECRETS_ENCRYPTION_KEY: optionalString.refine((s) => s === undefined || Buffer.from(s, 'base64').length === 32, 'expected base64 of 32 bytes'),
    /** consoles polled at the same time by one invocation (docs/fleet-alerts.md) */
    FLEET_POLL_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(50),
  })
  .refine((c) => !(c.ACCESS_IDENTITY_FILE && c.ACCESS_MACHINE_ID_IDENTITY), {
    message: 'set ACCESS_IDENTITY_FILE or ACCESS_MACHINE_ID_IDENTITY, not both',
    path: ['ACCESS_MACHINE_ID_IDENTITY'],
  })
  .refine((c) => !((c.ACCESS_IDENTITY_FILE || c.ACCESS_MACHINE_ID_IDENTITY) && !c.ACCESS_AUTH_SERVER), {
    message: 'an identity file needs ACCESS_AUTH_SERVER (tctl --identity also requires --auth-server)',
    path: ['ACCESS_AUTH_SERVER'],
  });

export type FleetConfig = z.output<typeof fleetEnvSchema>;

export class FleetConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid fleet configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'FleetConfigError';
  }
}

/** Parse the environment; throws FleetConfigError naming every bad variable (never its value). */
export function loadFleetConfig(env: NodeJS.ProcessEnv = process.env): FleetConfig {
  const r = fleetEnvSchema.safeParse(env);
  if (!r.success) throw new FleetConfigError(r.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`));
  return r.data;
}
