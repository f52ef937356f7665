import { allFunctions, budgetOf, bundleSize, entryOf } from '../../bench/bundle-budgets';

// Every function bundled as deployed (esbuild.config.cjs) stays within its budget (issue 9):
// health 100 KB, the password service 300 KB, any other 600 KB. `npm run bench:bundles` prints
// the sizes and module-load times.
describe('function bundles', () => {
  const fns = allFunctions();
  it('cover the three services', () => {
    expect(new Set(fns.map((f) => f.service))).toEqual(new Set(['hdc-console', 'hdc-password-service', 'hdc-fleet']));
  });
  it.each(fns.map((f) => [`${f.service}/${f.name}`, f] as const))('%s is within its budget', async (_name, fn) => {
    const size = await bundleSize(entryOf(fn));
    expect({ fn: fn.name, kb: Math.ceil(size / 1024), over: size > budgetOf(fn) }).toEqual({ fn: fn.name, kb: Math.ceil(size / 1024), over: false });
  });
});
