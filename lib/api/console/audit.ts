import { z } from 'zod';

// The console's audit answers (lib/audit): rows as stored, the chain's verification, and the
// read-only status the fleet plane polls.

const problem = z.enum(['hash_mismatch', 'link_broken', 'missing_row', 'head_mismatch', 'checkpoint_mismatch', 'signature_invalid']);

export const auditRow = z
  .object({
    seq: z.number(),
    at: z.string(),
    id: z.string(),
    prevHash: z.string(),
    hash: z.string(),
    event: z.string(),
    outcome: z.string(),
    actor: z.object({ id: z.string().optional(), name: z.string().optional(), provider: z.string().optional(), ip: z.string().optional() }).optional(),
    target: z.object({ id: z.string().optional(), name: z.string().optional(), dn: z.string().optional(), kind: z.string().optional() }).optional(),
    reason: z.string().optional(),
    ticket: z.string().optional(),
    correlationId: z.string().optional(),
    client: z.string().optional(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'AuditRow', description: 'An audit row as stored in the hash chain' });
export const auditPage = z
  .object({ items: z.array(auditRow), cursor: z.string().optional(), examined: z.number() })
  .meta({ id: 'AuditPage', description: 'Rows newest first; `cursor` for the next page' });

const verifyResult = { ok: z.boolean(), checked: z.number(), firstBadSeq: z.number().optional(), problem: problem.optional() };
export const auditVerify = z.object({
  ...verifyResult,
  incremental: z.object({
    ...verifyResult,
    verifiedThroughSeq: z.number(),
    headSeq: z.number(),
    pending: z.number(),
    sample: z.object({ atSeq: z.number(), lapStartedAt: z.string(), lastLapStartedAt: z.string().optional(), lastLapCompletedAt: z.string().optional() }).optional(),
  }),
  full: z.object({
    last: z.object({ ...verifyResult, startedAt: z.string(), completedAt: z.string(), throughSeq: z.number().optional() }).optional(),
    running: z.object({ startedAt: z.string(), seq: z.number(), untilSeq: z.number(), checked: z.number() }).optional(),
  }),
});

export const fleetStatus = z
  .object({
    instance: z.object({ version: z.string(), configured: z.boolean(), domain: z.string().optional() }),
    health: z.object({ status: z.string(), database: z.string() }),
    audit: z.object({
      chain: z.string(),
      firstBadSeq: z.number().optional(),
      problem: problem.optional(),
      lastFullVerificationAt: z.string().nullable(),
      failedLogins24h: z.number().nullable(),
      head: z.object({ seq: z.number(), hash: z.string() }).nullable().optional(),
      witness: z.object({ seq: z.number(), hash: z.string().nullable() }).optional(),
    }),
    directory: z.object({ dcs: z.array(z.object({ name: z.string(), url: z.string(), state: z.string(), problem: z.string().optional() })) }),
  })
  .meta({ id: 'ConsoleStatus', description: 'The read-only status the fleet plane polls' });
