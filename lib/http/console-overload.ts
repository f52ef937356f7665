import { runtime } from '../runtime';
import { logOverload, recordOverload, type OverloadRefusal } from './overload';

/**
 * A refusal made in front of the console's functions (the container gateway, the local
 * serverless-offline gateway): logged, and audited once a minute per reason through the console's
 * own runtime (its store and audit chain), as the functions' own refusals are.
 */
export function recordConsoleOverload(refusal: OverloadRefusal): void {
  let rt;
  try {
    rt = runtime();
  } catch {
    logOverload(refusal); // no usable configuration here: logged, not audited
    return;
  }
  void recordOverload(rt, refusal);
}

/**
 * Build the console's runtime (configuration, store, audit chain) ahead of the first refusal: the
 * local gateway calls this at start, since building it at the first refusal of a burst blocked the
 * gateway process (and so every request in it) while the burst went on.
 */
export function prepareConsoleOverload(): void {
  try {
    void runtime().store.ping().catch(() => undefined);
  } catch {
    /* no usable configuration: refusals are logged only */
  }
}
