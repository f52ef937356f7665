import type { ZodError } from 'zod';
import { ApiError, badRequest } from '../../errors';

/** Field errors of a zod failure, without echoing the rejected values (they may be secrets). */
export function validationError(e: ZodError, where: 'body' | 'query' | 'path'): ApiError {
  const issues = e.issues.map((i) => ({
    field: [where, ...i.path.map(String)].join('.'),
    message: i.message,
    ...(((i as { params?: { code?: string } }).params?.code) ? { code: (i as { params?: { code?: string } }).params!.code } : {}),
  }));
  const specific = issues.find((i) => i.code)?.code;
  return badRequest(specific ?? 'validation_failed', { errors: issues });
}

interface Schema<T> {
  safeParse(v: unknown): { success: true; data: T } | { success: false; error: ZodError };
}

/** Parse with a route's schema (none: undefined); a failure is 400 with the fields named. */
export function parseWith<T>(schema: Schema<T> | undefined, value: unknown, where: 'body' | 'query'): T | undefined {
  if (!schema) return undefined;
  const r = schema.safeParse(value);
  if (!r.success) throw validationError(r.error, where);
  return r.data;
}
