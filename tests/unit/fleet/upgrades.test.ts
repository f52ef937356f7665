import fs from 'node:fs';
import path from 'node:path';
import { unzipSync, strFromU8 } from 'fflate';
import { compareVersions, driftOf, parseVersion } from '../../../lib/fleet/upgrades/version';
import { CLOSED_PLAN_KEEP_MS, isForgotten, planOnPack, planOnRound, planState, progressOf, type UpgradePlan } from '../../../lib/fleet/upgrades/plans';
import { imageArgument, normalizeSettings, upgradeSettingsSchema } from '../../../lib/fleet/upgrades/settings';
import { hostPart, packZip, wrapperScript, type UpgradePack } from '../../../lib/fleet/upgrades/pack';
import { evaluateRules } from '../../../lib/fleet/alerts/rules';

// Console drift and upgrade plans (fleet spec, "Console drift and upgrade plans", "Upgrade
// settings and plans"): version ordering, the plan state table at its boundary times, settings
// validation and the zip's layout.

const DAY = 86_400_000;
const T0 = Date.parse('2026-11-01T00:00:00Z');

describe('semantic version ordering', () => {
  it.each([
    ['1.10.0', '1.9.0', 1],
    ['1.9.0', '1.10.0', -1],
    ['v1.4.0', '1.4.0', 0],
    ['1.4.0', 'v1.4.0', 0],
    ['v2.0.0', 'v1.99.99', 1],
    ['1.4.0-rc.1', '1.4.0', -1],
    ['1.4.0', '1.4.0-rc.1', 1],
    ['1.4.0-rc.1', '1.4.0-rc.2', -1],
    ['1.4.0-alpha', '1.4.0-beta', -1],
    ['1.4.0-rc.1', '1.3.9', 1],
    ['1.4.0+build.5', '1.4.0', 0],
    ['1.4.0+build.5', '1.4.0+build.7', 0],
    ['1.4.1+x', '1.4.0+y', 1],
  ])('%s vs %s → %s', (a, b, want) => {
    expect(compareVersions(a, b)).toBe(want);
  });

  it('non-version tags: identical is equal, anything else cannot be ordered', () => {
    expect(compareVersions('main', 'main')).toBe(0);
    expect(compareVersions('1.4', '1.4')).toBe(0);
    expect(compareVersions('1.4', '1.4.0')).toBeUndefined();
    expect(compareVersions('main', '1.4.0')).toBeUndefined();
    expect(compareVersions('build-2041', 'build-2042')).toBeUndefined();
    expect(compareVersions('1.4.0', 'nightly')).toBeUndefined();
  });

  it('only a leading v is ignored (no =, no spaces, no leading zeros)', () => {
    expect(parseVersion('v1.2.3')?.version).toBe('1.2.3');
    expect(parseVersion('=1.2.3')).toBeUndefined();
    expect(parseVersion(' 1.2.3')).toBeUndefined();
    expect(parseVersion('1.2.3 ')).toBeUndefined();
    expect(parseVersion('01.2.3')).toBeUndefined();
    expect(parseVersion('V1.2.3')).toBeUndefined();
  });

  it('badges: Up to date at or above the target, Behind below, Unknown without a version or an order', () => {
    expect(driftOf('1.4.0', '1.4.0')).toBe('up_to_date');
    expect(driftOf('1.5.0', '1.4.0')).toBe('up_to_date');
    expect(driftOf('v1.4.0+abc', '1.4.0')).toBe('up_to_date');
    expect(driftOf('1.4.0-rc.1', '1.4.0')).toBe('behind');
    expect(driftOf('1.3.9', 'v1.4.0')).toBe('behind');
    expect(driftOf(null, '1.4.0')).toBe('unknown'); // never polled successfully
    expect(driftOf(undefined, '1.4.0')).toBe('unknown');
    expect(driftOf('main', '1.4.0')).toBe('unknown');
    expect(driftOf('main', 'main')).toBe('up_to_date');
    expect(driftOf('1.4.0', null)).toBe('unknown');
  });
});

describe('upgrade settings', () => {
  const ok = (b: unknown) => upgradeSettingsSchema.safeParse(b).success;
  it('refuses latest, whitespace and shell characters in the tag', () => {
    for (const t of ['latest', 'LATEST', 'Latest', '1.4.0 ', ' 1.4.0', '1.4\t0', '1.4.0;rm -rf /', '$(id)', '`id`', '1.4.0&&x', "1.4'0", '1.4"0', 'a|b', 'a>b', '.hidden', '-x', 'a'.repeat(129), 'a:b', 'a/b'])
      expect([t, ok({ targetTag: t })]).toEqual([t, false]);
    for (const t of ['1.4.0', 'v1.4.0', '1.4.0-rc.1', 'main', 'build_2041', '1.4', 'a'.repeat(128), '']) expect([t, ok({ targetTag: t })]).toEqual([t, true]);
  });
  it('takes a repository without a tag or digest', () => {
    for (const r of ['registry.example.com/hdc/console', 'ghcr.io/msp/hdc', 'localhost:5000/hdc', 'hdc', 'docker.io/library/hdc', ''])
      expect([r, ok({ targetTag: '1.4.0', repository: r })]).toEqual([r, true]);
    for (const r of ['ghcr.io/msp/hdc:1.4.0', 'hdc:1.4.0', 'ghcr.io/msp/hdc@sha256:abc', 'Registry/HDC', 'a b', 'x;y', '$(x)/y', 'localhost:5000'])
      expect([r, ok({ targetTag: '1.4.0', repository: r })]).toEqual([r, false]);
  });
  it('delay: 1 to 365 days, default 7', () => {
    expect(ok({ targetTag: '1.4.0', alertAfterDays: 0 })).toBe(false);
    expect(ok({ targetTag: '1.4.0', alertAfterDays: 366 })).toBe(false);
    expect(ok({ targetTag: '1.4.0', alertAfterDays: 1.5 })).toBe(false);
    expect(ok({ targetTag: '1.4.0', alertAfterDays: 1 })).toBe(true);
    expect(ok({ targetTag: '1.4.0', alertAfterDays: 365 })).toBe(true);
    expect(normalizeSettings(upgradeSettingsSchema.parse({ targetTag: '1.4.0' }))).toEqual({ targetTag: '1.4.0', repository: null, alertAfterDays: 7 });
    expect(normalizeSettings(upgradeSettingsSchema.parse({ targetTag: '', repository: '' }))).toEqual({ targetTag: null, repository: null, alertAfterDays: 7 });
  });
  it('the script argument: repository:tag, or the tag alone', () => {
    expect(imageArgument({ repository: 'ghcr.io/msp/hdc' }, '1.4.0')).toBe('ghcr.io/msp/hdc:1.4.0');
    expect(imageArgument({ repository: null }, '1.4.0')).toBe('1.4.0');
  });
});

describe('the plan state table', () => {
  const target = { tag: '1.4.0', image: '1.4.0' };
  const planned = (): UpgradePlan => planOnPack(undefined, { consoleId: 'c1', version: '1.3.0' }, target, T0, 'admin').plan;

  it('none → pending when a pack is generated', () => {
    const { plan, created } = planOnPack(undefined, { consoleId: 'c1', version: '1.3.0' }, target, T0, 'admin');
    expect(created).toBe(true);
    expect(plan).toEqual({ consoleId: 'c1', from: '1.3.0', to: '1.4.0', image: '1.4.0', plannedAt: new Date(T0).toISOString(), plannedBy: 'admin' });
    expect(planState(plan, T0, 7)).toBe('pending');
  });
  it('regenerating neither plans again nor restarts the delay', () => {
    const p = planned();
    const again = planOnPack(p, { consoleId: 'c1', version: '1.3.0' }, target, T0 + 5 * DAY);
    expect(again.created).toBe(false);
    expect(again.plan).toBe(p);
    expect(planState(again.plan, T0 + 7 * DAY + 1, 7)).toBe('overdue');
  });
  it('a new target replaces the open plan (new delay)', () => {
    const p = planned();
    const next = planOnPack(p, { consoleId: 'c1', version: '1.3.0' }, { tag: '1.5.0', image: '1.5.0' }, T0 + 5 * DAY);
    expect(next.created).toBe(true);
    expect(next.plan).toMatchObject({ to: '1.5.0', plannedAt: new Date(T0 + 5 * DAY).toISOString() });
  });
  it('a closed plan does not stop a new one', () => {
    const closed = planOnRound(planned(), true, '1.4.0', T0 + DAY);
    expect(planOnPack(closed, { consoleId: 'c1', version: '1.3.0' }, target, T0 + 2 * DAY).created).toBe(true);
  });
  it('pending → overdue strictly after the delay (exactly the delay is still pending)', () => {
    const p = planned();
    expect(planState(p, T0 + 7 * DAY - 1, 7)).toBe('pending');
    expect(planState(p, T0 + 7 * DAY, 7)).toBe('pending');
    expect(planState(p, T0 + 7 * DAY + 1, 7)).toBe('overdue');
    expect(planState(p, T0 + DAY + 1, 1)).toBe('overdue');
    expect(planState(p, T0 + 365 * DAY, 365)).toBe('pending');
  });
  it('pending → upgraded when a round reads the target or above; no answer, no decision', () => {
    const p = planned();
    expect(planOnRound(p, true, '1.3.5', T0 + DAY)).toBe(p);
    expect(planOnRound(p, true, '1.4.0-rc.2', T0 + DAY)).toBe(p);
    expect(planOnRound(p, false, '1.4.0', T0 + DAY)).toBe(p); // last poll failed
    expect(planOnRound(p, true, null, T0 + DAY)).toBe(p);
    const up = planOnRound(p, true, 'v1.4.1', T0 + DAY);
    expect(up).toMatchObject({ upgradedAt: new Date(T0 + DAY).toISOString(), reachedVersion: 'v1.4.1' });
    expect(planState(up, T0 + 100 * DAY, 7)).toBe('upgraded');
    expect(planOnRound(up, true, '1.5.0', T0 + 2 * DAY)).toBe(up); // closed stays closed
  });
  it('an overdue plan still closes when the console reaches the target', () => {
    const p = planned();
    expect(planState(p, T0 + 10 * DAY, 7)).toBe('overdue');
    expect(planState(planOnRound(p, true, '1.4.0', T0 + 10 * DAY), T0 + 10 * DAY, 7)).toBe('upgraded');
  });
  it('closed plans are forgotten strictly after 30 days', () => {
    const up = planOnRound(planned(), true, '1.4.0', T0 + DAY);
    const closedAt = T0 + DAY;
    expect(CLOSED_PLAN_KEEP_MS).toBe(30 * DAY);
    expect(isForgotten(up, closedAt + 30 * DAY - 1)).toBe(false);
    expect(isForgotten(up, closedAt + 30 * DAY)).toBe(false);
    expect(isForgotten(up, closedAt + 30 * DAY + 1)).toBe(true);
    expect(isForgotten(planned(), T0 + 400 * DAY)).toBe(false); // open plans are never forgotten by age
  });
  it('progress counters: planned = upgraded + pending + overdue', () => {
    const a = planned();
    const b = { ...planned(), consoleId: 'c2', plannedAt: new Date(T0 + 5 * DAY).toISOString() };
    const c = planOnRound({ ...planned(), consoleId: 'c3' }, true, '1.4.0', T0 + DAY);
    expect(progressOf([a, b, c], T0 + 8 * DAY, 7)).toEqual({ planned: 3, upgraded: 1, pending: 1, overdue: 1 });
    expect(progressOf([], T0, 7)).toEqual({ planned: 0, upgraded: 0, pending: 0, overdue: 0 });
  });
  it('the overdue rule fires with the same boundary, only while the console answers', () => {
    const console = { id: 'c1', clientCode: 'acme', url: 'https://hdc.acme.test', sealedToken: 'x', createdAt: '', updatedAt: '' };
    const st = (ok: boolean) => new Map([['c1', { consoleId: 'c1', roundId: 'r', polledAt: '', ok, ms: 1, consecutiveFailures: ok ? 0 : 1, status: { instance: { version: '1.3.0' }, health: { status: 'healthy' }, audit: {}, directory: { dcs: [] } } } as any]]);
    const input = (now: number, ok = true) => ({ now, roundId: 'r', settings: { failedLoginsThreshold: 20 }, consoles: [console], states: st(ok), upgrades: { plans: [{ consoleId: 'c1', to: '1.4.0', plannedAt: new Date(T0).toISOString(), reached: false }], delayDays: 7 } });
    expect(evaluateRules(input(T0 + 7 * DAY)).held.map((h) => h.kind)).not.toContain('console_upgrade_overdue');
    expect(evaluateRules(input(T0 + 7 * DAY)).clearKeys).toContain('console:c1:upgrade');
    const late = evaluateRules(input(T0 + 7 * DAY + 1)).held.find((h) => h.kind === 'console_upgrade_overdue')!;
    expect(late).toMatchObject({ key: 'console:c1:upgrade', severity: 'warning', clientCode: 'acme', params: { from: '1.3.0', to: '1.4.0' } });
    const silent = evaluateRules(input(T0 + 9 * DAY, false));
    expect(silent.held).toEqual([]);
    expect(silent.clearKeys).not.toContain('console:c1:upgrade');
  });
});

describe('the zip', () => {
  it('one folder per client: README.md, upgrade-<host>.sh (executable wrapper), upgrade.sh and the scripts it needs and installs', () => {
    const pack: UpgradePack = {
      target: { tag: '1.4.0', repository: 'ghcr.io/msp/hdc', image: 'ghcr.io/msp/hdc:1.4.0' },
      generatedAt: '2026-11-25T10:00:00.000Z',
      leftOut: [],
      clients: [
        { code: 'acme', name: 'Acme', consoles: [{ id: 'i1', url: 'https://hdc.acme.test', host: 'hdc.acme.test', from: '1.3.0', to: '1.4.0', drift: 'behind', plannedAt: '', newlyPlanned: true, commands: [], script: wrapperScript({ url: 'https://hdc.acme.test', host: 'hdc.acme.test', clientCode: 'acme', from: '1.3.0', to: '1.4.0', image: 'ghcr.io/msp/hdc:1.4.0' }, 'now') }] },
        { code: 'globex', name: 'Globex', consoles: [{ id: 'i2', url: 'https://10.0.0.5:8443', host: '10.0.0.5-8443', from: null, to: '1.4.0', drift: 'unknown', plannedAt: '', newlyPlanned: false, commands: [], script: '#!/usr/bin/env bash\n' }] },
      ],
    };
    const files = unzipSync(new Uint8Array(packZip(pack)));
    const scripts = (c: string) => ['backup.sh', 'common.sh', 'install.sh', 'renew-tls.sh', 'restore.sh', 'upgrade.sh'].map((f) => `${c}/${f}`);
    expect(Object.keys(files).sort()).toEqual(['acme/', 'acme/README.md', ...scripts('acme').slice(0, 5), 'acme/upgrade-hdc.acme.test.sh', 'acme/upgrade.sh', 'globex/', 'globex/README.md', ...scripts('globex').slice(0, 5), 'globex/upgrade-10.0.0.5-8443.sh', 'globex/upgrade.sh'].sort());
    // the scripts as this release ships them (containers/scripts)
    for (const f of scripts('acme')) expect([f, strFromU8(files[f])]).toEqual([f, fs.readFileSync(path.join(__dirname, '../../../containers/scripts', f.split('/')[1]), 'utf8')]);
    expect(strFromU8(files['acme/upgrade-hdc.acme.test.sh'])).toContain("exec ./upgrade.sh 'ghcr.io/msp/hdc:1.4.0'");
    expect(strFromU8(files['acme/README.md'])).toContain('| https://hdc.acme.test | 1.3.0 | 1.4.0 | `upgrade-hdc.acme.test.sh` |');
    expect(strFromU8(files['globex/upgrade.sh'])).toMatch(/^#!\/usr\/bin\/env bash/);
  });
  it('host part of a file name', () => {
    expect(hostPart('https://hdc.acme.test')).toBe('hdc.acme.test');
    expect(hostPart('https://hdc.acme.test:8443/x')).toBe('hdc.acme.test-8443');
    expect(hostPart('https://[::1]:9443')).toBe('--1-9443');
  });
});
