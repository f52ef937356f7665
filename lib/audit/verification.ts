import { logger } from '../log';
import { chainHashOfText } from './canonical';
import { ChainReader } from './chain-reader';
import { pad, storedText, textNamesSeq, type Point } from './rows';

// Verification of a chain: the walk that re-hashes rows, the incremental check of each poll with
// its rolling sample, and the resumable background full walk (lib/audit/index.ts explains why).

export type VerifyProblem =
  | 'hash_mismatch' // a row's content no longer gives its hash
  | 'link_broken' // a row does not name its predecessor's hash
  | 'missing_row' // a sequence number is missing (deleted or moved rows)
  | 'head_mismatch' // the newest rows were deleted or rewritten
  | 'checkpoint_mismatch' // the chain no longer holds a hash a signed checkpoint recorded (rewritten rows)
  | 'signature_invalid'; // a state item (head, anchor, checkpoint, walk) lacks its MAC or carries a forged one

export interface VerifyResult {
  ok: boolean;
  checked: number;
  firstBadSeq?: number;
  problem?: VerifyProblem;
}

/** What one incremental check did (the fleet status poll, GET /api/audit/verify). */
export interface IncrementalResult extends VerifyResult {
  /** the newest row verified so far (the signed checkpoint) */
  verifiedThroughSeq: number;
  headSeq: number;
  /** rows newer than the checkpoint left for the next check (more than `maxNewRows` were new) */
  pending: number;
  /** the rolling sample: where its lap stands, and the last lap that re-hashed every row up to the checkpoint */
  sample?: { atSeq: number; lapStartedAt: string; lastLapStartedAt?: string; lastLapCompletedAt?: string };
}

/** The result of the last completed full walk (the background job, `verify-audit`). */
export interface FullWalkResult extends VerifyResult {
  startedAt: string;
  completedAt: string;
  throughSeq?: number;
}
export interface FullWalkProgress {
  startedAt: string;
  seq: number;
  untilSeq: number;
  checked: number;
}
export interface FullWalkState {
  last?: FullWalkResult;
  running?: FullWalkProgress;
}

interface CheckpointState extends Point {
  verifiedAt: string;
  sampleSeq: number;
  sampleHash: string;
  lapStartedAt: string;
  lastLapStartedAt?: string;
  lastLapCompletedAt?: string;
}
interface WalkState {
  current?: FullWalkProgress & { hash: string; untilHash: string; expect?: Point };
  last?: FullWalkResult;
}

type WalkOutcome = { ok: true; last: Point; checked: number; complete: boolean } | { ok: false; checked: number; firstBadSeq: number; problem: VerifyProblem };

export const SAMPLE_ROWS_PER_CHECK = 2000;
export const MAX_NEW_ROWS_PER_CHECK = 10_000;

export class VerifiedChain extends ChainReader {
  // ---- verification ----

  /**
   * Walk rows after `start` through `untilSeq`, re-hashing each from its stored content and its
   * predecessor's hash. `expect`: a signed (sequence, hash) the walk must meet when it passes it.
   */
  protected async walk(start: Point, untilSeq: number, limits: { maxRows?: number; deadline?: number; expect?: Point } = {}): Promise<WalkOutcome> {
    let prev = start.hash;
    let expected = start.seq + 1;
    let checked = 0;
    if (untilSeq <= start.seq) return { ok: true, last: start, checked, complete: true };
    // a walk bounded by rows reads no further than it may walk
    const readUntil = limits.maxRows !== undefined ? Math.min(untilSeq, start.seq + limits.maxRows) : untilSeq;
    for await (const segment of this.chainSegments(start.seq + 1, readUntil, untilSeq)) {
      for (const it of segment) {
        const text = storedText(it);
        if (it.sk !== pad(expected) || it.seq !== expected || !textNamesSeq(text, expected)) {
          return { ok: false, checked, firstBadSeq: expected, problem: it.seq > expected && it.sk > pad(expected) ? 'missing_row' : 'link_broken' };
        }
        if (it.prevHash !== prev) return { ok: false, checked, firstBadSeq: expected, problem: 'link_broken' };
        const hash = chainHashOfText(prev, text);
        if (hash !== it.hash) return { ok: false, checked, firstBadSeq: expected, problem: 'hash_mismatch' };
        if (limits.expect && limits.expect.seq === expected && limits.expect.hash !== hash) return { ok: false, checked, firstBadSeq: expected, problem: 'checkpoint_mismatch' };
        prev = hash;
        checked++;
        if (expected === untilSeq) return { ok: true, last: { seq: expected, hash }, checked, complete: true };
        if ((limits.maxRows !== undefined && checked >= limits.maxRows) || (limits.deadline !== undefined && this.now() >= limits.deadline)) {
          return { ok: true, last: { seq: expected, hash }, checked, complete: false };
        }
        expected++;
      }
    }
    // the rows up to the signed end are gone: the newest rows were deleted
    return { ok: false, checked, firstBadSeq: expected, problem: 'head_mismatch' };
  }

  /** The signed ends of the chain, or the problem with them. */
  protected async ends(): Promise<{ ok: true; anchor: Point; head: Point } | { ok: false; firstBadSeq: number; problem: VerifyProblem }> {
    const [anchor, head] = await Promise.all([this.anchor(), this.head()]);
    if (!anchor.valid) return { ok: false, firstBadSeq: anchor.value.seq, problem: 'signature_invalid' };
    if (head && !head.valid) return { ok: false, firstBadSeq: head.value.seq, problem: 'signature_invalid' };
    if (head && head.value.seq >= anchor.value.seq && (await this.row(head.value.seq + 1))) {
      // a row past the head: an append in between moved the head too; otherwise it was inserted
      const again = await this.head();
      if (again?.value.seq === head.value.seq) return { ok: false, firstBadSeq: head.value.seq + 1, problem: 'head_mismatch' };
    }
    if (!head || head.value.seq < anchor.value.seq) {
      // no head: only right while no row was ever written after the anchor
      for await (const _ of this.stored(anchor.value.seq + 1, 999_999_999_999, { pageSize: 1 })) return { ok: false, firstBadSeq: anchor.value.seq + 1, problem: 'head_mismatch' };
      return { ok: true, anchor: anchor.value, head: anchor.value };
    }
    return { ok: true, anchor: anchor.value, head: head.value };
  }

  /**
   * `full`: walk the whole chain now, from the anchor to the head (the CLI, tests; the background
   * job uses `fullWalk` in slices); records the result as the last full walk.
   * `incremental`: the check of a poll, bounded (see `verifyIncremental`).
   */
  async verify(mode: 'full' | 'incremental' = 'full'): Promise<VerifyResult> {
    if (mode === 'incremental') {
      const r = await this.verifyIncremental();
      return { ok: r.ok, checked: r.checked, ...(r.ok ? {} : { firstBadSeq: r.firstBadSeq, problem: r.problem }) };
    }
    let state = await this.fullWalk({ restart: true });
    while (state.running) state = await this.fullWalk({});
    const last = state.last!;
    return { ok: last.ok, checked: last.checked, ...(last.ok ? {} : { firstBadSeq: last.firstBadSeq, problem: last.problem }) };
  }

  /**
   * One bounded check from the signed checkpoint: re-hash the checkpoint row from its content,
   * verify the rows added since (at most `maxNewRows`) up to the signed head, then re-hash the
   * next `sampleRows` older rows of the rolling sample (a lap walks anchor → checkpoint, where it
   * must meet the checkpoint's signed hash, then starts again). A success moves the checkpoint
   * and the sample; a failure moves nothing, so the next check finds it again.
   */
  async verifyIncremental(): Promise<IncrementalResult> {
    for (let attempt = 0; ; attempt++) {
      const r = await this.incrementalOnce();
      // rows a concurrent purge deleted are not a break: look again once the anchor has moved
      if (!r.ok && attempt === 0 && (await this.anchor()).value.seq >= (r.firstBadSeq ?? 0)) continue;
      if (!r.ok) logger.error('audit chain does not verify', { chain: this.chain, firstBadSeq: r.firstBadSeq, problem: r.problem, check: 'incremental' });
      return r;
    }
  }

  protected async incrementalOnce(): Promise<IncrementalResult> {
    const fail = (checked: number, firstBadSeq: number, problem: VerifyProblem, headSeq = 0, through = 0): IncrementalResult => ({ ok: false, checked, firstBadSeq, problem, verifiedThroughSeq: through, headSeq, pending: 0 });
    const ends = await this.ends();
    if (!ends.ok) return fail(0, ends.firstBadSeq, ends.problem);
    const { anchor, head } = ends;
    const saved = await this.readState<CheckpointState>('VERIFIED', 'checkpoint');
    if (saved && !saved.valid) return fail(0, saved.value?.seq ?? 0, 'signature_invalid', head.seq);
    const cp = saved?.value;
    let checked = 0;
    let start: Point = anchor;
    if (cp && cp.seq > anchor.seq) {
      if (cp.seq > head.seq) return fail(0, head.seq + 1, 'head_mismatch', head.seq, cp.seq);
      // the checkpoint row itself, re-hashed from what is stored now (not its stored hash)
      const it = await this.storedRow(cp.seq);
      if (!it) return fail(0, cp.seq, 'missing_row', head.seq, cp.seq);
      if (chainHashOfText(it.prevHash, storedText(it)) !== it.hash) return fail(0, cp.seq, 'hash_mismatch', head.seq, cp.seq);
      if (it.hash !== cp.hash) return fail(0, cp.seq, 'checkpoint_mismatch', head.seq, cp.seq);
      checked++;
      start = cp;
    }
    const fresh = await this.walk(start, head.seq, { maxRows: this.opts.maxNewRows ?? MAX_NEW_ROWS_PER_CHECK });
    if (!fresh.ok) return fail(checked + fresh.checked, fresh.firstBadSeq, fresh.problem, head.seq, start.seq);
    checked += fresh.checked;
    if (fresh.complete && fresh.last.hash !== head.hash) return fail(checked, head.seq, 'head_mismatch', head.seq, start.seq);
    const through = fresh.last;

    // the rolling sample over older rows
    const nowIso = new Date(this.now()).toISOString();
    const lapFresh = !cp || cp.sampleSeq < anchor.seq || cp.sampleSeq >= through.seq;
    let sample = lapFresh
      ? { sampleSeq: anchor.seq, sampleHash: anchor.hash, lapStartedAt: nowIso, lastLapStartedAt: cp?.lastLapStartedAt, lastLapCompletedAt: cp?.lastLapCompletedAt }
      : { sampleSeq: cp.sampleSeq, sampleHash: cp.sampleHash, lapStartedAt: cp.lapStartedAt, lastLapStartedAt: cp.lastLapStartedAt, lastLapCompletedAt: cp.lastLapCompletedAt };
    const s = await this.walk({ seq: sample.sampleSeq, hash: sample.sampleHash }, through.seq, { maxRows: this.opts.sampleRows ?? SAMPLE_ROWS_PER_CHECK, expect: through });
    if (!s.ok) return fail(checked + s.checked, s.firstBadSeq, s.problem, head.seq, start.seq);
    checked += s.checked;
    sample = s.complete
      ? { sampleSeq: anchor.seq, sampleHash: anchor.hash, lapStartedAt: nowIso, lastLapStartedAt: sample.lapStartedAt, lastLapCompletedAt: nowIso }
      : { ...sample, sampleSeq: s.last.seq, sampleHash: s.last.hash };

    const next: CheckpointState = { seq: through.seq, hash: through.hash, verifiedAt: nowIso, ...sample };
    if (next.lastLapStartedAt === undefined) delete next.lastLapStartedAt;
    if (next.lastLapCompletedAt === undefined) delete next.lastLapCompletedAt;
    if (through.seq > 0) await this.writeState('VERIFIED', 'checkpoint', next, saved?.version);
    return {
      ok: true,
      checked,
      verifiedThroughSeq: through.seq,
      headSeq: head.seq,
      pending: head.seq - through.seq,
      sample: {
        atSeq: next.sampleSeq,
        lapStartedAt: next.lapStartedAt,
        ...(next.lastLapStartedAt ? { lastLapStartedAt: next.lastLapStartedAt } : {}),
        ...(next.lastLapCompletedAt ? { lastLapCompletedAt: next.lastLapCompletedAt } : {}),
      },
    };
  }

  /** The signed checkpoint: the last verified row and the rolling sample's position. */
  async checkpoint(): Promise<(CheckpointState & { valid: boolean }) | undefined> {
    const s = await this.readState<CheckpointState>('VERIFIED', 'checkpoint');
    return s ? { ...s.value, valid: s.valid } : undefined;
  }

  /**
   * One slice of the background full walk (resumable): continue the walk in progress, or start one
   * from the anchor to the current signed head, until it ends, `deadline` (epoch ms) or `maxRows`.
   * The walk meets the signed checkpoint's hash when it passes it. Its progress and its last result
   * are a signed state item; `restart` drops a walk in progress and starts afresh.
   */
  async fullWalk(limits: { deadline?: number; maxRows?: number; restart?: boolean; afterPurge?: boolean }): Promise<FullWalkState> {
    // the walk's state, the chain's signed ends and the checkpoint, read together
    const [saved, ends, checkpoint] = await Promise.all([this.readState<WalkState>('FULLWALK', 'walk'), this.ends(), this.readState<CheckpointState>('VERIFIED', 'checkpoint')]);
    const nowIso = () => new Date(this.now()).toISOString();
    const finish = async (last: FullWalkResult): Promise<FullWalkState> => {
      if (!last.ok) logger.error('audit chain does not verify', { chain: this.chain, firstBadSeq: last.firstBadSeq, problem: last.problem, check: 'full' });
      await this.writeState('FULLWALK', 'walk', { last }, saved?.version);
      return { last };
    };
    if (saved && !saved.valid) return finish({ ok: false, checked: 0, firstBadSeq: 0, problem: 'signature_invalid', startedAt: nowIso(), completedAt: nowIso() });
    if (!ends.ok) return finish({ ok: false, checked: 0, firstBadSeq: ends.firstBadSeq, problem: ends.problem, startedAt: nowIso(), completedAt: nowIso() });
    let current = limits.restart ? undefined : saved?.value.current;
    if (!current || current.seq < ends.anchor.seq) {
      const cp = checkpoint;
      if (cp && !cp.valid) return finish({ ok: false, checked: 0, firstBadSeq: cp.value?.seq ?? 0, problem: 'signature_invalid', startedAt: nowIso(), completedAt: nowIso() });
      const expect = cp && cp.value.seq > ends.anchor.seq && cp.value.seq <= ends.head.seq ? { seq: cp.value.seq, hash: cp.value.hash } : undefined;
      current = { startedAt: nowIso(), seq: ends.anchor.seq, hash: ends.anchor.hash, untilSeq: ends.head.seq, untilHash: ends.head.hash, checked: 0, ...(expect ? { expect } : {}) };
      if (cp && cp.value.seq > ends.head.seq) return finish({ ok: false, checked: 0, firstBadSeq: ends.head.seq + 1, problem: 'head_mismatch', startedAt: current.startedAt, completedAt: nowIso() });
    }
    const w = await this.walk({ seq: current.seq, hash: current.hash }, current.untilSeq, { deadline: limits.deadline, maxRows: limits.maxRows, expect: current.expect });
    if (!w.ok) {
      // rows a purge deleted while the walk was under way: start again from the new anchor
      if ((await this.anchor()).value.seq >= w.firstBadSeq && !limits.afterPurge) return this.fullWalk({ ...limits, restart: true, afterPurge: true });
      return finish({ ok: false, checked: current.checked + w.checked, firstBadSeq: w.firstBadSeq, problem: w.problem, startedAt: current.startedAt, completedAt: nowIso() });
    }
    const checked = current.checked + w.checked;
    if (w.complete) {
      if (w.last.seq !== current.untilSeq || w.last.hash !== current.untilHash) {
        return finish({ ok: false, checked, firstBadSeq: current.untilSeq, problem: 'head_mismatch', startedAt: current.startedAt, completedAt: nowIso() });
      }
      return finish({ ok: true, checked, throughSeq: current.untilSeq, startedAt: current.startedAt, completedAt: nowIso() });
    }
    const next = { ...current, seq: w.last.seq, hash: w.last.hash, checked };
    const state: WalkState = { current: next, ...(saved?.value.last ? { last: saved.value.last } : {}) };
    await this.writeState('FULLWALK', 'walk', state, saved?.version);
    return { last: saved?.value.last, running: { startedAt: next.startedAt, seq: next.seq, untilSeq: next.untilSeq, checked } };
  }

  /** The background walk's last result and progress (a forged state item reads as a broken walk). */
  async fullWalkState(): Promise<FullWalkState> {
    const s = await this.readState<WalkState>('FULLWALK', 'walk');
    if (!s) return {};
    if (!s.valid) return { last: { ok: false, checked: 0, firstBadSeq: 0, problem: 'signature_invalid', startedAt: '', completedAt: '' } };
    const c = s.value.current;
    return { last: s.value.last, ...(c ? { running: { startedAt: c.startedAt, seq: c.seq, untilSeq: c.untilSeq, checked: c.checked } } : {}) };
  }

  /**
   * The chain's state for a poll or the verify route: one incremental check now, plus the last
   * background full walk (a break it found stays reported until a later full walk succeeds).
   */
  async check(): Promise<VerifyResult & { incremental: IncrementalResult; full: FullWalkState }> {
    const incremental = await this.verifyIncremental();
    const full = await this.fullWalkState();
    const bad = !incremental.ok ? incremental : full.last && !full.last.ok ? full.last : undefined;
    return {
      ok: !bad,
      checked: incremental.checked,
      ...(bad ? { firstBadSeq: bad.firstBadSeq, problem: bad.problem } : {}),
      incremental,
      full,
    };
  }
}
