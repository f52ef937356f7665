import fs from 'node:fs';
import path from 'node:path';

// Fleet handlers only parse, call lib/fleet and answer (issue 9): scoping of lists and audit
// writes live in lib/fleet (register.ts, proxies.ts, audit-view.ts, autoupdate.ts, alerts-admin.ts).
const DIR = path.resolve(__dirname, '../../../functions/fleet');

describe('fleet handlers are thin', () => {
  const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.ts'));
  it.each(files)('%s writes no audit row and filters no scope itself', (f) => {
    const src = fs.readFileSync(path.join(DIR, f), 'utf8');
    expect(src).not.toMatch(/audit\.append|appendUnderEachClient/);
    expect(src).not.toMatch(/visibleCodes\(\)|proxiesInScope|levelOn\(/);
    expect(src).not.toMatch(/from ['"](ldapts|@aws-sdk\/[^'"]+|node:crypto)['"]/);
  });
});
