/**
 * Every provider adapter the service uses is seen through this wrapper (providerRegistry applies it), so
 * the request knows, whatever the provider, when it has called one that may act: from then on money may
 * have moved, and idempotency's deferred mode answers any failure as settle-later (issue 21 finding 2).
 * A Proxy, so the adapter stays itself (instanceof, its own methods bound to it).
 */
import { noteProviderCall } from '../platform/request-scope.js';
import type { PaymentProvider } from './provider.js';

/** The calls that may act at the provider: a lookup or a notification's parsing changes nothing there. */
const ACTING: ReadonlySet<PropertyKey> = new Set<keyof PaymentProvider>(['verify', 'purchase', 'authorize', 'capture', 'void', 'refund', 'startAsyncPayment']);

const marked = new WeakMap<PaymentProvider, PaymentProvider>();

export function markingCalls(provider: PaymentProvider): PaymentProvider {
  const known = marked.get(provider);
  if (known) return known;
  const proxy = new Proxy(provider, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (!ACTING.has(property)) return value.bind(target);
      return (...args: unknown[]) => {
        noteProviderCall(); // before the call: once the request is on its way, the provider may act on it
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  marked.set(provider, proxy);
  marked.set(proxy, proxy);
  return proxy;
}
