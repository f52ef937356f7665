import type { z } from 'zod';

// What a route answers, declared beside it (console and fleet alike): its success answers by
// status, each a JSON body from a zod schema, a file, or no body; and the error codes its own
// logic can answer, by status (the pipeline's are added from the route's access, permission,
// step-up and schemas). The OpenAPI documents are generated from these declarations, the
// handlers' return type is checked against the same schemas, and the contract test holds every
// answer of the test suites against the documents (docs/api.md).

export type SuccessStatus = 200 | 201 | 202 | 204;
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 502 | 503;

/** A response header an answer carries (`required`: always sent with this answer). */
export interface HeaderDecl {
  description: string;
  required?: boolean;
}

/** A JSON body, with the headers that come with it. */
export interface JsonAnswer<S extends z.ZodType = z.ZodType> {
  json: S;
  description?: string;
  headers?: Record<string, HeaderDecl>;
}

/** A file: text (CSV, a PowerShell script) or bytes (a zip), with its headers. */
export interface FileAnswer {
  file: 'text/csv' | 'text/plain' | 'application/zip';
  description: string;
  headers?: Record<string, HeaderDecl>;
}

/** No body (204). */
export interface NoContent {
  none: string;
  headers?: Record<string, HeaderDecl>;
}

export type Answer = z.ZodType | JsonAnswer | FileAnswer | NoContent;
/** By status; several answers under one status are alternatives (a JSON body or a zip, as asked). */
export type Answers = { [S in SuccessStatus]?: Answer | readonly Answer[] };
export type ErrorCodes = { [S in ErrorStatus]?: readonly string[] };

type BodyOf<X> = X extends readonly (infer E)[] ? BodyOf<E> : X extends z.ZodType ? z.input<X> : X extends JsonAnswer<infer S> ? z.input<S> : never;
/** The JSON body a handler may return: what one of its declared JSON answers accepts. */
export type AnswerBody<A extends Answers> = { [K in keyof A]-?: BodyOf<A[K]> }[keyof A];

export const isFileAnswer = (a: Answer): a is FileAnswer => typeof a === 'object' && a !== null && 'file' in a;
export const isNoContent = (a: Answer): a is NoContent => typeof a === 'object' && a !== null && 'none' in a;
export const isJsonAnswer = (a: Answer): a is JsonAnswer => typeof a === 'object' && a !== null && 'json' in a;

export const json = <S extends z.ZodType>(schema: S, extra: Omit<JsonAnswer<S>, 'json'> = {}): JsonAnswer<S> => ({ json: schema, ...extra });
export const noContent = (description = 'Done: no body', headers?: Record<string, HeaderDecl>): NoContent => ({ none: description, ...(headers ? { headers } : {}) });
export const file = (type: FileAnswer['file'], description: string, headers?: Record<string, HeaderDecl>): FileAnswer => ({ file: type, description, ...(headers ? { headers } : {}) });

/** Headers several answers carry. */
export const HEADERS = {
  attachment: { 'Content-Disposition': { description: 'attachment; filename="…": the name to save the file under', required: true } },
  sessionCookie: { 'Set-Cookie': { description: 'the session cookie __Host-hdc (Secure, HttpOnly, SameSite=Strict, Path=/)' } },
} satisfies Record<string, Record<string, HeaderDecl>>;

/** Merge error code sets (codes of one status united, sorted). */
export function errorCodes(...sets: Array<ErrorCodes | undefined>): ErrorCodes {
  const out: Partial<Record<ErrorStatus, Set<string>>> = {};
  for (const set of sets) {
    for (const [status, codes] of Object.entries(set ?? {}) as Array<[string, readonly string[]]>) {
      const s = (out[Number(status) as ErrorStatus] ??= new Set());
      for (const c of codes) s.add(c);
    }
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v!].sort()])) as ErrorCodes;
}
