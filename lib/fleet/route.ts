import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { z } from 'zod';
import type { AuditActor } from '../audit';
import type { Method } from '../http/route';
import type { FleetAccess } from './access';
import type { Level } from './config';
import type { FleetRuntime } from './runtime';

export type { Method } from '../http/route';

/**
 * Who may call a route (one central guard decides, before any side effect):
 * - anonymous: anyone (health, local login)
 * - signed-in: any signed-in caller; reads are then filtered by scope in lib/fleet
 * - admin: administrators only (403 admin_required)
 * - client: the route addresses one resource by id; `resource` resolves its client
 *   (unknown or out of scope → 404 alike), then `level` is required on that client.
 */
export type FleetAccessRule = 'anonymous' | 'signed-in' | 'admin' | 'client';

export interface Addressed<R = unknown> {
  clientCode: string | null;
  /**
   * A resource serving several clients (a gateway with desktops of several clients; null for a
   * desktop without a client code): reads show the caller his clients' part, and an action
   * (operator level) needs the level on every one of them.
   */
  clientCodes?: Array<string | null>;
  resource: R;
}

export interface FleetContext<B = any, Q = any, P = any, R = any> {
  rt: FleetRuntime;
  event: APIGatewayProxyEventV2;
  body: B;
  query: Q;
  params: P;
  access?: FleetAccess;
  /** the resource resolved by the guard for `client` routes */
  addressed?: Addressed<R>;
  sourceIp: string;
  correlationId: string;
  actor: AuditActor;
  route: string;
  header(name: string): string | undefined;
  /** refuse with an audited auth.forbidden row (the guard's helper for body-dependent checks) */
  refuse(code: 'client_scope' | 'insufficient_level' | 'admin_required', requiredLevel: Level | 'admin', client: string | null): Promise<never>;
}

export interface FleetResult {
  status?: number;
  body?: unknown;
  text?: string;
  binary?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface FleetRoute<B = any, Q = any, P = any, R = any> {
  method: Method;
  path: string;
  summary: string;
  access: FleetAccessRule;
  /** for `client` routes: the level needed on the addressed resource's client */
  level?: Level;
  resource?: (ctx: FleetContext<B, Q, P, R>) => Promise<Addressed<R> | undefined>;
  /** checks on the validated body that name a client or admin-only fields (still before any side effect) */
  authorize?: (ctx: FleetContext<B, Q, P, R>) => Promise<void>;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  handle(ctx: FleetContext<B, Q, P, R>): Promise<FleetResult>;
}

export const defineFleetRoute = <B = undefined, Q = undefined, P = undefined, R = unknown>(r: FleetRoute<B, Q, P, R>): FleetRoute<B, Q, P, R> => r;
