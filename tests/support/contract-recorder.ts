import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../local/processes';
import { ContractValidator, type App, type ObservedAnswer, type Verdict } from './contract';

// The contract test's record (issue 30): every HTTP answer the integration and e2e suites receive
// (the console client, the fleet tests' `call`, the browser's API traffic) is validated against
// its application's OpenAPI document when it arrives, and its verdict appended to the run's
// record: the operation, the status, the violations. No body, header value or raw path is
// written (they may carry secrets); zzz-contract.test.ts reads the record at the end of the run.
// The record is on while HDC_CONTRACT_DIR is set (tests/integration/global-setup.ts sets it).

export interface RecordedVerdict extends Verdict {
  app: App;
  method: string;
}

/** The directory of this run's record of one jest project (integration, e2e). */
export const contractDir = (project: string) => path.join(ROOT, 'local/.run/contract', project);
export const answersFile = (dir: string) => path.join(dir, 'answers.jsonl');

const validators: Partial<Record<App, ContractValidator>> = {};

/**
 * The application's document as the code generates it (the one its route serves), generated once
 * per run: the first test file writes it beside the record, the others read it.
 */
export function documentOf(app: App, dir = process.env.HDC_CONTRACT_DIR): object {
  const file = dir ? path.join(dir, `${app}.openapi.json`) : undefined;
  if (file && fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8'));
  // loaded only when needed: every route module of the application comes with it
  const doc: object =
    app === 'console'
      ? (require('../../functions/console/openapi') as typeof import('../../functions/console/openapi')).consoleDocument({ helpdeskEnabled: true })
      : (require('../../functions/fleet/openapi') as typeof import('../../functions/fleet/openapi')).fleetDocument();
  if (file) {
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(doc));
    fs.renameSync(tmp, file);
  }
  return doc;
}

export const validatorOf = (app: App): ContractValidator => (validators[app] ??= new ContractValidator(app, documentOf(app) as ConstructorParameters<typeof ContractValidator>[1]));

/** Validate one answer and record its verdict (nothing when the record is off). */
export function recordAnswer(app: App, answer: ObservedAnswer): void {
  const dir = process.env.HDC_CONTRACT_DIR;
  if (!dir) return;
  const verdict = validatorOf(app).validate(answer);
  const line: RecordedVerdict = { app, method: answer.method.toUpperCase(), ...verdict };
  fs.appendFileSync(answersFile(dir), JSON.stringify(line) + '\n');
}

/** The run's record, verdict by verdict. */
export function readRecord(dir: string): RecordedVerdict[] {
  const file = answersFile(dir);
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RecordedVerdict);
}
