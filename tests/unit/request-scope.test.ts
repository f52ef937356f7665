import { forgetRequestRead, inRequestScope, readOncePerRequest } from '../../lib/request-scope';
import { readSettingsOncePerRequest, writeSettings, type InstanceSettings } from '../../lib/setup/settings';
import { putRecord } from '../../lib/store/records';
import { memoryDynamoStore } from '../support/memory-store';

// One request shares one read of the settings (pipeline, guard, decision); another request, a
// write within the request, or code outside any request reads the store again.
const settings = (title: string) => ({ domain: title }) as unknown as InstanceSettings;

describe('reads shared within one request', () => {
  it('reads once per request, and each request reads again', async () => {
    let reads = 0;
    const read = async () => ++reads;
    await inRequestScope(async () => {
      const [a, b] = await Promise.all([readOncePerRequest('k', read), readOncePerRequest('k', read)]);
      expect([a, b, await readOncePerRequest('k', read)]).toEqual([1, 1, 1]);
    });
    await inRequestScope(async () => expect(await readOncePerRequest('k', read)).toBe(2));
    // outside a request: every call reads
    expect(await readOncePerRequest('k', read)).toBe(3);
    expect(await readOncePerRequest('k', read)).toBe(4);
  });

  it('forgets a read after a write, and a failed read is not an unhandled rejection', async () => {
    let reads = 0;
    await inRequestScope(async () => {
      await readOncePerRequest('k', async () => ++reads);
      forgetRequestRead('k');
      expect(await readOncePerRequest('k', async () => ++reads)).toBe(2);
      const failing = readOncePerRequest('f', async () => Promise.reject(new Error('store down')));
      await expect(failing).rejects.toThrow('store down');
      await expect(readOncePerRequest('f', async () => 1)).rejects.toThrow('store down'); // the request saw one answer
    });
  });

  it('the settings: another instance\'s change shows in the next request; the request\'s own write at once', async () => {
    const store = memoryDynamoStore();
    await putRecord(store, 'INSTANCE', 'SETTINGS', settings('one'), { expectVersion: 0 });
    await inRequestScope(async () => {
      const first = await readSettingsOncePerRequest(store);
      expect(first?.settings.domain).toBe('one');
      // another instance writes meanwhile: this request keeps deciding on the settings it read
      await putRecord(store, 'INSTANCE', 'SETTINGS', settings('two'), { expectVersion: 1 });
      expect((await readSettingsOncePerRequest(store))?.settings.domain).toBe('one');
    });
    await inRequestScope(async () => {
      const rec = await readSettingsOncePerRequest(store);
      expect(rec?.settings.domain).toBe('two');
      expect(await writeSettings(store, settings('three'), rec!.version)).toBe(true);
      expect((await readSettingsOncePerRequest(store))?.settings.domain).toBe('three');
    });
  });
});
