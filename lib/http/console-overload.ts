import { runtime } from '../runtime';
import { recordOverload, type OverloadRefusal } from './overload';

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
    return; // no usable configuration here: the gateway has logged the refusal
  }
  void recordOverload(rt, refusal);
}
