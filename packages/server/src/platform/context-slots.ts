/**
 * Values an async flow carries through every await (the request's scope, the database gate's and the
 * payment lock's markers), all in ONE AsyncLocalStorage. Node 20 propagates each enabled
 * AsyncLocalStorage instance separately: every promise created anywhere in the process gets one symbol
 * property per instance at its creation (async_hooks' init hook), so four instances cost four property
 * writes and a larger object on every promise, where one slot map costs one. A slot is a key in that map;
 * running with a value copies the (small) map, so an inner run never changes what an outer flow sees.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

type Slots = Readonly<Record<symbol, unknown>>;

const storage = new AsyncLocalStorage<Slots>();
const NONE: Slots = Object.freeze({});

export interface ContextSlot<T> {
  /** The value the current flow runs with, if any. */
  get(): T | undefined;
  /** Runs `fn` (and everything it starts) with this slot set to `value`; the other slots as they are. */
  run<R>(value: T, fn: () => R): R;
}

/** A slot of the process's one async context (`name` only names it in a debugger). */
export function contextSlot<T>(name: string): ContextSlot<T> {
  const key = Symbol(name);
  return {
    get: () => storage.getStore()?.[key] as T | undefined,
    run: (value, fn) => storage.run({ ...(storage.getStore() ?? NONE), [key]: value }, fn),
  };
}
