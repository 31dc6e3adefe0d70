/**
 * What the API checks of a routing before storing it (docs/guides/routing.md; 422 ROUTING_VALIDATION_FAILED),
 * each failure naming its path: steps numbered 1..n, no connection twice in a route, every connection the organization's with the
 * step's provider, a provider this service runs that serves the routing's payment method, conditions well formed for their kind,
 * sort numbers unique. The spec has already bounded sizes and types. What a provider cannot serve of a condition (a currency, a
 * country) does not stop a routing: routingWarnings says it in the routing's `warnings`.
 */
import type { FieldError } from '../http/problems.js';
import { serves, type ProviderCatalogue } from '../providers/catalogue.js';
import type { ProviderRegistry } from '../providers/registry.js';
import { CARD_BRANDS } from '../vault/card-validation.js';
import type { RoutingCondition, StoredConditionSet, StoredRoute } from './model.js';
import type { ConnectionRow } from './repository.js';

type Loose = Record<string, unknown>;

/**
 * What a route's steps are checked against: the organization's connections, the providers this service
 * runs, what each can serve (GET /v1/providers) and the routing's payment method.
 */
export interface RouteTargets {
  connections: ReadonlyMap<string, ConnectionRow>;
  providers: Pick<ProviderRegistry, 'get'>;
  catalogue: Pick<ProviderCatalogue, 'get'>;
  paymentMethod: string;
}

export function validateRoute(route: StoredRoute, path: string, targets: RouteTargets, errors: FieldError[]): void {
  const { connections, providers, catalogue, paymentMethod } = targets;
  const seen = new Set<string>();
  const steps = [...route.steps].sort((a, b) => a.index - b.index);
  steps.forEach((step, i) => {
    const at = `${path}.steps[${route.steps.indexOf(step)}]`;
    if (step.index !== i + 1) errors.push({ path: `${at}.index`, message: `must be ${i + 1}: step indexes run from 1 without gaps or repeats` });
    const connection = connections.get(step.connection_id);
    if (!connection) errors.push({ path: `${at}.connection_id`, message: `is not a connection of this organization (GET /v1/connections lists them)` });
    else if (connection.provider_id !== step.provider_id)
      errors.push({ path: `${at}.provider_id`, message: `must be ${connection.provider_id}, the provider of connection ${step.connection_id}` });
    // A provider this service does not run (a sandbox one outside sandbox mode) can never be routed to.
    else if (!providers.get(step.provider_id))
      errors.push({ path: `${at}.provider_id`, message: `${step.provider_id} is not available in this service (the sandbox providers exist in sandbox mode only)` });
    else if (catalogue.get(step.provider_id)?.capabilities.paymentMethods.includes(paymentMethod) === false)
      errors.push({ path: `${at}.provider_id`, message: `${step.provider_id} does not serve ${paymentMethod} payments (GET /v1/providers lists what each provider serves)` });
    if (seen.has(step.connection_id)) errors.push({ path: `${at}.connection_id`, message: 'appears twice in this route' });
    seen.add(step.connection_id);
  });
}

const FIELDS_OF: Record<string, readonly string[]> = {
  LIST: ['type', 'operator', 'values'],
  IN_RANGE: ['type', 'operator', 'from', 'to'],
  BETWEEN: ['type', 'operator', 'min', 'max'],
  METADATA: ['type', 'key', 'operator', 'values'],
};

function validateCondition(c: Loose, at: string, errors: FieldError[]): void {
  const add = (field: string, message: string): void => {
    errors.push({ path: field ? `${at}.${field}` : at, message });
  };
  const allowed = (kind: keyof typeof FIELDS_OF) => {
    for (const field of Object.keys(c)) if (!FIELDS_OF[kind]!.includes(field)) add(field, `is not a field of a ${String(c.type)} ${String(c.operator)} condition`);
  };
  const values = (pattern: RegExp | readonly string[], what: string): void => {
    const list = c.values as unknown[] | undefined;
    if (!Array.isArray(list) || list.length === 0) return add('values', 'is required: at least one value');
    list.forEach((v, i) => {
      const ok = typeof v === 'string' && (Array.isArray(pattern) ? pattern.includes(v) : (pattern as RegExp).test(v));
      if (!ok) add(`values[${i}]`, `must be ${what}`);
    });
  };
  const listOperator = () => {
    if (c.operator !== 'IN' && c.operator !== 'NOT_IN') add('operator', `must be IN or NOT_IN for ${String(c.type)}`);
  };
  switch (c.type) {
    case 'COUNTRY':
      listOperator();
      allowed('LIST');
      return values(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 country code (BR)');
    case 'CURRENCY':
      listOperator();
      allowed('LIST');
      return values(/^[A-Z]{3}$/, 'an ISO 4217 currency code (BRL)');
    case 'CARD_BRAND':
      listOperator();
      allowed('LIST');
      return values(CARD_BRANDS, `a card brand as the vault names it (${CARD_BRANDS.join(', ')})`);
    case 'IIN':
      if (c.operator === 'STARTS_WITH') {
        allowed('LIST');
        return values(/^\d{1,8}$/, '1 to 8 digits');
      }
      if (c.operator !== 'IN_RANGE') return add('operator', 'must be IN_RANGE or STARTS_WITH for IIN');
      allowed('IN_RANGE');
      for (const end of ['from', 'to'] as const) if (typeof c[end] !== 'string' || !/^\d{6,8}$/.test(c[end] as string)) add(end, 'must be 6 to 8 digits');
      if (typeof c.from === 'string' && typeof c.to === 'string') {
        if (c.from.length !== c.to.length) add('to', 'must have as many digits as from');
        else if (c.from > c.to) add('to', 'must not be below from');
      }
      return;
    case 'AMOUNT':
      if (c.operator !== 'BETWEEN') return add('operator', 'must be BETWEEN for AMOUNT');
      allowed('BETWEEN');
      for (const end of ['min', 'max'] as const) if (typeof c[end] !== 'number' || !((c[end] as number) >= 0)) add(end, 'must be a number ≥ 0 (in the payment currency)');
      if (typeof c.min === 'number' && typeof c.max === 'number' && c.min > c.max) add('max', 'must not be below min');
      return;
    case 'METADATA':
      if (c.operator !== 'EQUALS' && c.operator !== 'IN') return add('operator', 'must be EQUALS or IN for METADATA');
      allowed('METADATA');
      if (typeof c.key !== 'string' || c.key.length === 0) add('key', 'is required: the metadata key to look at');
      if (c.operator === 'EQUALS' && Array.isArray(c.values) && c.values.length !== 1) add('values', 'must hold exactly one value with EQUALS');
      return values(/^[\s\S]{0,255}$/, 'a string of at most 255 characters');
    default:
      add('type', 'must be COUNTRY, CURRENCY, CARD_BRAND, IIN, AMOUNT or METADATA');
  }
}

export function validateConditionSets(sets: readonly StoredConditionSet[], targets: RouteTargets, errors: FieldError[]): void {
  const sortNumbers = new Set<number>();
  sets.forEach((set, i) => {
    const at = `condition_sets[${i}]`;
    if (sortNumbers.has(set.sort_number)) errors.push({ path: `${at}.sort_number`, message: `${set.sort_number} is used by another condition set` });
    sortNumbers.add(set.sort_number);
    set.conditions.forEach((c, j) => validateCondition(c as unknown as Loose, `${at}.conditions[${j}]`, errors));
    // Amounts are compared in the payment's currency: a set must say which currency it means.
    const amount = set.conditions.findIndex((c) => c.type === 'AMOUNT');
    if (amount >= 0 && !set.conditions.some((c: RoutingCondition) => c.type === 'CURRENCY' && c.operator === 'IN'))
      errors.push({ path: `${at}.conditions[${amount}]`, message: 'needs a CURRENCY condition with operator IN in the same set (amounts are in the payment currency)' });
    validateRoute(set.route, `${at}.route`, targets, errors);
  });
}

/** The routing's `warnings` (spec: at most 20 lines of at most 255 characters). */
const WARNINGS = { lines: 20, length: 255 } as const;

/**
 * Conditions a step's provider cannot serve: a CURRENCY or COUNTRY `IN` value outside its capabilities
 * (GET /v1/providers). Payments that match the set would be sent to a provider that refuses them; the
 * routing applies all the same (the provider may widen what it serves), so this warns, never refuses.
 */
export function routingWarnings(sets: readonly StoredConditionSet[], catalogue: Pick<ProviderCatalogue, 'get'>): string[] {
  const lines: string[] = [];
  sets.forEach((set, i) => {
    set.conditions.forEach((c, j) => {
      if ((c.type !== 'CURRENCY' && c.type !== 'COUNTRY') || c.operator !== 'IN') return;
      for (const step of [...set.route.steps].sort((a, b) => a.index - b.index)) {
        const capabilities = catalogue.get(step.provider_id)?.capabilities;
        if (!capabilities) continue;
        const served = c.type === 'CURRENCY' ? capabilities.currencies : capabilities.countries;
        const missing = c.values.filter((v) => !serves(served, v));
        if (missing.length === 0) continue;
        const what = c.type === 'CURRENCY' ? 'currency' : 'country';
        lines.push(`condition_sets[${i}].conditions[${j}]: ${step.provider_id} (step ${step.index}) does not serve ${what} ${missing.join(', ')}`);
      }
    });
  });
  const clipped = lines.map((l) => (l.length > WARNINGS.length ? `${l.slice(0, WARNINGS.length - 1)}…` : l));
  return clipped.length <= WARNINGS.lines ? clipped : [...clipped.slice(0, WARNINGS.lines - 1), `and ${clipped.length - WARNINGS.lines + 1} more`];
}
