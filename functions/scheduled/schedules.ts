import { loadConfig, type Config } from '../../lib/config';

// The rates of the scheduled functions, rendered into serverless.yml at package time
// (`${file(./functions/scheduled/rates.cjs):<function>}`) from the same configuration the
// functions read (HDC_CONFIG_FILE, Section__Key variables): EventBridge in AWS, and
// serverless-offline's own scheduler under `npm start` (it fires on clock boundaries).

/** seconds (whole minutes) → an EventBridge rate expression: `rate(5 minutes)`, `rate(2 hours)`, `rate(1 day)`. */
export function rateExpression(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 60 || seconds % 60 !== 0) throw new Error(`a schedule rate must be whole minutes, got ${seconds} s`);
  const minutes = seconds / 60;
  const [n, unit] = minutes % 1440 === 0 ? [minutes / 1440, 'day'] : minutes % 60 === 0 ? [minutes / 60, 'hour'] : [minutes, 'minute'];
  return `rate(${n} ${unit}${n === 1 ? '' : 's'})`;
}

/** Every scheduled function of the console and its rate. */
export function scheduleRates(config: Config): Record<string, string> {
  return {
    approvalsExpiry: rateExpression(config.Approvals.CheckInterval),
    auditRetention: 'rate(1 day)',
    auditVerify: 'rate(1 hour)',
  };
}

export const scheduleRatesFromEnv = (env: NodeJS.ProcessEnv = process.env) => scheduleRates(loadConfig(env).config);
