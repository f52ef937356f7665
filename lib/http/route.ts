import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { z } from 'zod';
import type { AuditInput } from '../audit';
import type { OperatorIdentity, Session } from '../auth/sessions';
import type { OperatorRights } from '../authz/rights';
import type { Permission } from '../authz/permissions';
import type { ConsoleRuntime } from '../runtime';

import type { AnswerBody, Answers, ErrorCodes } from './answers';
import type { OperationParameter } from './openapi';
import type { Method } from './paths';

export { findRoute, matchPath, type Method } from './paths';

export interface RouteContext<B = any, Q = any, P = any> {
  rt: ConsoleRuntime;
  event: APIGatewayProxyEventV2;
  body: B;
  query: Q;
  params: P;
  session?: Session;
  operator?: OperatorIdentity;
  rights?: OperatorRights;
  sourceIp: string;
  correlationId: string;
  header(name: string): string | undefined;
}

export interface RouteResult<Body = unknown> {
  status?: number;
  body?: Body;
  /** raw text body (e.g. CSV), sent with `contentType` */
  text?: string;
  contentType?: string;
  cookies?: string[];
  headers?: Record<string, string>;
}

export interface Route<B = any, Q = any, P = any, A extends Answers = Answers> {
  method: Method;
  /** API Gateway path syntax: /api/computers/{id} */
  path: string;
  summary: string;
  /**
   * anonymous: no session needed; presession: any session incl. the anonymous pre-session
   * (sign-in, setup); operator: a signed-in operator; bearer: the route checks its own token.
   */
  access: 'anonymous' | 'presession' | 'operator' | 'bearer';
  permission?: Permission;
  /** needs a recent step-up in the instance's mode */
  stepUp?: boolean;
  /** exists only when Helpdesk:Enabled */
  helpdesk?: boolean;
  /**
   * a read slow by nature (diagnostics, exports, the audit walk, health): not bound by
   * Concurrency:ReadBudget (lib/http/middlewares/admission.ts, readDeadline)
   */
  longRead?: boolean;
  /** development: anyone may call it (OpenAPI document) */
  openInDevelopment?: boolean;
  /**
   * The route's own audit row for a refusal the pipeline decides after the CSRF check (missing
   * permission, validation) once the operator is known: its event, target and ticket read from the request,
   * so such a refusal is found on the target like the route's other refusals (LAPS reveal).
   */
  refusalAudit?: (req: { params: Record<string, string>; body: unknown }) => { event: string; target?: AuditInput['target']; ticket?: string };
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  /** its success answers by status (lib/http/answers.ts): the OpenAPI document's, and the handler's return type */
  responses: A;
  /** the error codes its own logic answers, by status; the pipeline's are added (lib/http/console-openapi.ts) */
  errors?: ErrorCodes;
  /** a longer description than the summary, for the OpenAPI document */
  description?: string;
  /** what the OpenAPI document cannot read from the above: a credential of its own, request headers */
  openapi?: { security?: Array<Record<string, string[]>>; parameters?: OperationParameter[] };
  handle(ctx: RouteContext<B, Q, P>): Promise<RouteResult<NoInfer<AnswerBody<A>>>>;
}

export const defineRoute = <B = undefined, Q = undefined, P = undefined, A extends Answers = Answers>(r: Route<B, Q, P, A>): Route<B, Q, P, A> => r;

export { STATE_CHANGING } from './paths';

/** `{id}` of a directory object route: any string; a malformed id is decided like an unknown one (404). */
export const objectIdParams = z.object({ id: z.string() });
