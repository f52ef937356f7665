import { z } from 'zod';
import { sha256Hex } from '../crypto/seal';
import { ApiError } from '../errors';
import { ClusterCliError, parseJsonArray, type ClusterCli } from './cluster-cli';

// Join tokens of new proxies through the cluster CLI's token commands (reference COMMANDS.md §4):
//   tctl tokens add --type=<type> --labels=<k=v,...> --ttl=<n>h --format=json
//   tctl tokens ls --format=json
//   tctl tokens rm <token>
// The token's value is its name in the cluster and the secret an agent joins with: it is shown
// once to the administrator who asked for it and never stored, logged or audited. The fleet plane
// keeps only its SHA-256 (`tokenId` is a prefix of it) and finds the token again by listing.

/** Agent types a join token may admit (tctl's --type, parsed by types.ParseTeleportRoles). */
export const JOIN_TOKEN_TYPES = ['windowsdesktop', 'node', 'app'] as const;
export type JoinTokenType = (typeof JOIN_TOKEN_TYPES)[number];

/** TTL of a join token in hours: long enough for an install visit, short enough to not linger. */
export const JOIN_TOKEN_TTL_HOURS = { min: 1, max: 72, default: 4 } as const;
export const joinTokenTtlSchema = z.number().int().min(JOIN_TOKEN_TTL_HOURS.min).max(JOIN_TOKEN_TTL_HOURS.max).default(JOIN_TOKEN_TTL_HOURS.default);

/** The label every token the fleet plane creates carries (the list shows only those). */
export const FLEET_MANAGED = 'fleet-managed';

export interface IssuedJoinToken {
  /** the secret: answer it once, never keep it */
  token: string;
  tokenHash: string;
  tokenId: string;
  expires: string;
  roles: string[];
}

export interface JoinTokenView {
  tokenId: string;
  roles: string[];
  labels: Record<string, string>;
  clientCode: string | null;
  deploymentId: string | null;
  expires: string | null;
}

export const tokenHashOf = (token: string) => sha256Hex(token);
/** The public handle of a token: 24 hex characters of its SHA-256 (96 bits; not the secret). */
export const tokenIdOf = (tokenHash: string) => tokenHash.slice(0, 24);

const TOKEN_VALUE = /^[A-Za-z0-9._-]{8,256}$/;
const LABEL_VALUE = /^[A-Za-z0-9._-]{1,63}$/;

const addOutput = z.object({ token: z.string().regex(TOKEN_VALUE), expires: z.string(), roles: z.array(z.string()).default([]) });

/** `tctl tokens add`: a fresh token for one agent type, labelled (labels must be plain words). */
export async function addJoinToken(cli: ClusterCli, opts: { type: JoinTokenType; ttlHours: number; labels: Record<string, string> }): Promise<IssuedJoinToken> {
  const labels = Object.entries({ ...opts.labels, [FLEET_MANAGED]: 'true' })
    .map(([k, v]) => {
      if (!LABEL_VALUE.test(k) || !LABEL_VALUE.test(v)) throw new Error(`join token label ${k} is not a plain word`);
      return `${k}=${v}`;
    })
    .join(',');
  const { stdout } = await cli.run(['tokens', 'add', `--type=${opts.type}`, `--labels=${labels}`, `--ttl=${opts.ttlHours}h`, '--format=json']);
  let parsed: z.output<typeof addOutput>;
  try {
    parsed = addOutput.parse(JSON.parse(stdout));
  } catch {
    throw new ClusterCliError('access_unavailable');
  }
  const tokenHash = tokenHashOf(parsed.token);
  // tctl prints `expires` in its host's time zone: normalise to UTC
  const expires = Number.isFinite(Date.parse(parsed.expires)) ? new Date(Date.parse(parsed.expires)).toISOString() : new Date(Date.now() + opts.ttlHours * 3600e3).toISOString();
  return { token: parsed.token, tokenHash, tokenId: tokenIdOf(tokenHash), expires, roles: parsed.roles };
}

interface ListedToken {
  name: string;
  view: JoinTokenView;
}

const tokenItem = z.object({
  metadata: z.object({ name: z.string(), labels: z.record(z.string(), z.string()).optional(), expires: z.string().optional() }),
  spec: z.object({ roles: z.array(z.string()).optional() }).optional(),
});

/** `tctl tokens ls`: every join token the identity may list, with its name (the secret) kept apart. */
async function listTokens(cli: ClusterCli): Promise<ListedToken[]> {
  const items = parseJsonArray((await cli.run(['tokens', 'ls', '--format=json'])).stdout);
  const out: ListedToken[] = [];
  for (const raw of items) {
    const p = tokenItem.safeParse(raw);
    if (!p.success) continue;
    const labels = p.data.metadata.labels ?? {};
    const hash = tokenHashOf(p.data.metadata.name);
    out.push({
      name: p.data.metadata.name,
      view: {
        tokenId: tokenIdOf(hash),
        roles: p.data.spec?.roles ?? [],
        labels,
        clientCode: labels.client_code ?? null,
        deploymentId: labels['fleet-deployment'] ?? null,
        expires: p.data.metadata.expires ?? null,
      },
    });
  }
  return out;
}

/** The fleet plane's own join tokens (label fleet-managed=true), without their secrets. */
export async function listFleetJoinTokens(cli: ClusterCli): Promise<JoinTokenView[]> {
  return (await listTokens(cli)).filter((t) => t.view.labels[FLEET_MANAGED] === 'true').map((t) => t.view);
}

export async function findJoinToken(cli: ClusterCli, tokenId: string): Promise<JoinTokenView | undefined> {
  return (await listTokens(cli)).find((t) => t.view.tokenId === tokenId && t.view.labels[FLEET_MANAGED] === 'true')?.view;
}

/**
 * A failed revocation (the identity lacks `token` delete or list, or the cluster is unreachable):
 * the token lives until its TTL; the answer names the manual command (spec: Identity role).
 * The command holds the secret only for administrators: others get the way to find it.
 */
export class TokenRevokeFailed extends ApiError {
  constructor(cause: string, details: { tokenId: string; expires: string | null; manualCommand: string }) {
    super(502, 'token_revoke_failed', { cause, ...details });
  }
}

export type RevokeResult = { revoked: true; alreadyGone: boolean } | { revoked: false; cause: string; manualCommand: (admin: boolean) => string };

/**
 * `tctl tokens rm` of the fleet token whose SHA-256 starts with `tokenId` (found by listing).
 * A token no longer listed (expired, removed by hand) is already revoked. Never throws a CLI error:
 * the caller audits the outcome and answers.
 */
export async function revokeJoinToken(cli: ClusterCli, tokenId: string, labelHint: string): Promise<RevokeResult> {
  const manual = (name?: string) => (admin: boolean) =>
    admin && name ? `tctl tokens rm ${name}` : `tctl tokens ls   # find the token labelled ${labelHint}, then: tctl tokens rm <token>`;
  let listed: ListedToken | undefined;
  try {
    listed = (await listTokens(cli)).find((t) => t.view.tokenId === tokenId);
  } catch (e) {
    return { revoked: false, cause: e instanceof ApiError ? e.code : 'access_unavailable', manualCommand: manual() };
  }
  if (!listed) return { revoked: true, alreadyGone: true };
  try {
    await cli.run(['tokens', 'rm', listed.name], { redact: [listed.name] });
    return { revoked: true, alreadyGone: false };
  } catch (e) {
    if (e instanceof ClusterCliError && e.missing) return { revoked: true, alreadyGone: true };
    return { revoked: false, cause: e instanceof ApiError ? e.code : 'access_unavailable', manualCommand: manual(listed.name) };
  }
}
