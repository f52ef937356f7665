import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { z } from 'zod';
import type { AuditActor } from '../audit';
import type { AnswerBody, Answers, ErrorCodes } from '../http/answers';
import type { OperationParameter } from '../http/openapi';
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

export interface FleetResult<Body = unknown> {
  status?: number;
  body?: Body;
  text?: string;
  binary?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface FleetRoute<B = any, Q = any, P = any, R = any, A extends Answers = Answers> {
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
  /** its success answers by status (lib/http/answers.ts): the OpenAPI document's, and the handler's return type */
  responses: A;
  /** the error codes its own logic answers, by status; the pipeline's are added (lib/fleet/openapi.ts) */
  errors?: ErrorCodes;
  /** a longer description than the summary, for the OpenAPI document */
  description?: string;
  /** what the OpenAPI document cannot read from the above (request headers) */
  openapi?: { parameters?: OperationParameter[] };
  handle(ctx: FleetContext<B, Q, P, R>): Promise<FleetResult<NoInfer<AnswerBody<A>>>>;
}

export const defineFleetRoute = <B = undefined, Q = undefined, P = undefined, R = unknown, A extends Answers = Answers>(r: FleetRoute<B, Q, P, R, A>): FleetRoute<B, Q, P, R, A> => r;
