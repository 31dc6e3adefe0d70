/**
 * Whether a payment matches a routing condition (docs/guides/routing.md#conditions). Pure functions over
 * PaymentFacts: no I/O, so they run on every payment at no cost.
 */
import type { PaymentFacts } from './plan.js';
import type { RoutingCondition, StoredConditionSet } from './model.js';

const inList = (operator: 'IN' | 'NOT_IN', values: readonly string[], value: string | null): boolean => {
  // A fact the payment does not have (no brand: not a card) is in no list, and so NOT_IN any list.
  const found = value !== null && values.includes(value.toUpperCase());
  return operator === 'IN' ? found : !found;
};

export function conditionMatches(condition: RoutingCondition, facts: PaymentFacts): boolean {
  switch (condition.type) {
    case 'COUNTRY':
      return inList(condition.operator, condition.values, facts.country);
    case 'CURRENCY':
      return inList(condition.operator, condition.values, facts.currency);
    case 'CARD_BRAND':
      return inList(condition.operator, condition.values, facts.brand);
    case 'IIN': {
      if (facts.iin === null) return false;
      if (condition.operator === 'STARTS_WITH') return condition.values.some((prefix) => facts.iin!.startsWith(prefix));
      // from and to have the same number of digits (validated): compare the IIN's prefix of that length.
      const prefix = facts.iin.slice(0, condition.from.length);
      return prefix.length === condition.from.length && prefix >= condition.from && prefix <= condition.to;
    }
    case 'AMOUNT': {
      const amount = Number(facts.amount);
      return Number.isFinite(amount) && amount >= condition.min && amount <= condition.max;
    }
    case 'METADATA': {
      const entry = facts.metadata.find((m) => m.key === condition.key);
      return entry !== undefined && condition.values.includes(entry.value);
    }
  }
}

/** The first set (by sort_number) whose every condition matches, or undefined for the default route. */
export function matchingSet(sets: readonly StoredConditionSet[], facts: PaymentFacts): StoredConditionSet | undefined {
  return [...sets].sort((a, b) => a.sort_number - b.sort_number).find((set) => set.conditions.every((c) => conditionMatches(c, facts)));
}
