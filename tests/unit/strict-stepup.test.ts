import { requireRecentStepUp, requireStrictStepUp } from '../../lib/auth/stepup';
import type { Session } from '../../lib/auth/sessions';
import type { ConsoleRuntime } from '../../lib/runtime';
import type { StepUpMode } from '../../lib/setup/settings';
import { putRecord } from '../../lib/store/records';
import { memoryDynamoStore, observe } from '../support/memory-store';

// The strict step-up of the LAPS routes and the usual one: the operator's enrolment is read only
// when it can change the answer. A recent step-up by the authenticator satisfies every proof; one by
// password is refused once the operator holds an authenticator (naming the proof to ask for).

const GUID = '3f1d2c4b-0000-4000-8000-000000000001';
function runtime(mode: StepUpMode, enrolled: boolean) {
  const store = memoryDynamoStore();
  const reads: string[] = [];
  observe(store, (op, input) => {
    if (op === 'get') reads.push(input.Key.pk);
  });
  const rt = { store, settings: async () => ({ stepUpMode: mode }), config: { Authentication: { StepUpWindow: 300 } } } as unknown as ConsoleRuntime;
  // the record lib/auth/operators reads
  const ready = enrolled ? putRecord(store, `OPERATOR#${GUID}`, 'PROFILE', { totpSealed: 'sealed' }) : Promise.resolve(true);
  return { rt, reads, ready };
}
const session = (proof: 'authenticator' | 'password' | undefined, secondsAgo = 10): Session =>
  ({ id: 's', version: 1, csrfToken: 'c', createdAt: 0, lastSeenAt: 0, expiresAt: 0, operator: { guid: GUID, username: 'op', provider: 'ad' }, ...(proof ? { stepUpProof: proof, stepUpAt: Math.floor(Date.now() / 1000) - secondsAgo } : {}) }) as unknown as Session;

describe('step-up: the enrolment is read only when it changes the answer', () => {
  it.each(['none', 'password', 'authenticator'] as StepUpMode[])('mode %s: a recent authenticator step-up passes the strict step-up with no enrolment read', async (mode) => {
    const { rt, reads, ready } = runtime(mode, true);
    await ready;
    reads.length = 0;
    await expect(requireStrictStepUp(rt, session('authenticator'))).resolves.toBeUndefined();
    await expect(requireRecentStepUp(rt, session('authenticator'))).resolves.toBeUndefined();
    expect(reads).toEqual([]);
  });

  it('enrolled, stepped up by password: the strict step-up is refused and asks for the authenticator (mode none and authenticator)', async () => {
    for (const mode of ['none', 'authenticator'] as StepUpMode[]) {
      const { rt, ready } = runtime(mode, true);
      await ready;
      await expect(requireStrictStepUp(rt, session('password'))).rejects.toMatchObject({ status: 403, code: 'strict_reauth_required', details: { proof: 'authenticator' } });
    }
  });

  it('not enrolled, stepped up by password: passes; an authenticator step-up past the window (301 s) is refused', async () => {
    const { rt, ready } = runtime('none', false);
    await ready;
    await expect(requireStrictStepUp(rt, session('password'))).resolves.toBeUndefined();
    await expect(requireStrictStepUp(rt, session('authenticator', 301))).rejects.toMatchObject({ code: 'strict_reauth_required', details: { proof: 'password' } });
    await expect(requireStrictStepUp(rt, session(undefined))).rejects.toMatchObject({ code: 'strict_reauth_required' });
  });
});
