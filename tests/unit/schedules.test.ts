import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { rateExpression, scheduleRatesFromEnv } from '../../functions/scheduled/schedules';

// The schedules come from the configuration (Approvals:CheckInterval), not from a fixed line in
// serverless.yml: what serverless renders is what EventBridge (and serverless-offline) schedule.
const ROOT = path.resolve(__dirname, '../..');

/** serverless.yml as serverless renders it with this environment (no AWS account needed). */
function renderedRate(env: Record<string, string>): { rate?: string[]; error?: string } {
  const r = spawnSync(path.join(ROOT, 'node_modules/.bin/serverless'), ['print', '--stage', 'unit', '--format', 'json', '--path', 'functions.approvalsExpiry.events'], {
    cwd: ROOT,
    env: { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off', ...env },
    encoding: 'utf8',
  });
  if (r.status !== 0) return { error: `${r.stdout}${r.stderr}` };
  return { rate: JSON.parse(r.stdout)[0].schedule.rate };
}

describe('schedule rates', () => {
  it.each([
    [60, 'rate(1 minute)'],
    [300, 'rate(5 minutes)'],
    [420, 'rate(7 minutes)'],
    [3600, 'rate(1 hour)'],
    [7200, 'rate(2 hours)'],
    [5400, 'rate(90 minutes)'],
    [86400, 'rate(1 day)'],
  ])('%i s renders %s', (s, rate) => {
    expect(rateExpression(s)).toBe(rate);
  });

  it('reads Approvals:CheckInterval like the application (seconds, hh:mm:ss, HDC_ prefix, default 5 minutes)', () => {
    expect(scheduleRatesFromEnv({}).approvalsExpiry).toBe('rate(5 minutes)');
    expect(scheduleRatesFromEnv({ Approvals__CheckInterval: '120' }).approvalsExpiry).toBe('rate(2 minutes)');
    expect(scheduleRatesFromEnv({ HDC_Approvals__CheckInterval: '00:10:00' }).approvalsExpiry).toBe('rate(10 minutes)');
    expect(scheduleRatesFromEnv({}).auditRetention).toBe('rate(1 day)');
  });

  it.each(['90', '30', '0', '00:00:59'])('refuses %s (not whole minutes) naming the key', (v) => {
    expect(() => scheduleRatesFromEnv({ Approvals__CheckInterval: v })).toThrow(/Approvals:CheckInterval/);
  });

  it('is what serverless.yml renders for approvalsExpiry (default, 120 s, 00:10:00) and an invalid value fails the render', () => {
    expect(renderedRate({}).rate).toEqual(['rate(5 minutes)']);
    expect(renderedRate({ Approvals__CheckInterval: '120' }).rate).toEqual(['rate(2 minutes)']);
    expect(renderedRate({ HDC_Approvals__CheckInterval: '00:10:00' }).rate).toEqual(['rate(10 minutes)']);
    const bad = renderedRate({ Approvals__CheckInterval: '90' });
    expect(bad.rate).toBeUndefined();
    expect(bad.error).toMatch(/Approvals:CheckInterval must be whole minutes/);
  }, 60000);
});
