/**
 * The `date` and `date-time` formats as this service reads them: RFC 3339, narrowed to what PostgreSQL
 * stores and gives back unchanged, so that a value the validator lets in can never fail in the database
 * (ajv-formats accepts year 0000, which `date` and `timestamptz` refuse; offsets up to ±23:59, where
 * PostgreSQL stops at ±15:59; leap seconds and sub-microsecond digits, which it rolls or rounds; and
 * instants before year 1 or after 9999, which come back as "… BC" or a five-digit year). The spec's
 * description states the same ranges (spec/openapi.yaml, "Values").
 *
 * Registered with the request validator (validator.ts), and used by the tests' own schema checks.
 */
import type { FormatDefinition } from 'ajv';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** PostgreSQL's largest time zone displacement (15:59), in minutes. */
export const MAX_OFFSET_MINUTES = 15 * 60 + 59;

const utc = (year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number => {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day); // unlike Date.UTC, years 0–99 stay themselves
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime();
};
/** The instants `date-time` admits: 0001-01-01T00:00:00Z up to (not including) year 10000. */
const FIRST_INSTANT = utc(1, 1, 1);
const END_INSTANT = utc(10000, 1, 1);

function isCalendarDate(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

/** RFC 3339 full-date, years 0001–9999 (proleptic Gregorian, as PostgreSQL counts). */
export function isStorableDate(value: string): boolean {
  const m = DATE.exec(value);
  return m !== null && isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/**
 * RFC 3339 date-time with seconds 00–59, at most six fractional digits, `Z` or an offset within
 * ±15:59, for an instant from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z.
 */
export function isStorableDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (!isCalendarDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return false;
  let offset = 0;
  if (m[7] !== undefined) {
    const offsetHours = Number(m[8]);
    const offsetMinutes = Number(m[9]);
    if (offsetMinutes > 59) return false;
    offset = (m[7] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes);
    if (Math.abs(offset) > MAX_OFFSET_MINUTES) return false;
  }
  const instant = utc(year, month, day, hour, minute - offset, second);
  return instant >= FIRST_INSTANT && instant < END_INSTANT;
}

/** The formats to register with ajv (they replace ajv-formats' `date` and `date-time`). */
export const STORABLE_FORMATS: Record<'date' | 'date-time', FormatDefinition<string>> = {
  date: { type: 'string', validate: isStorableDate },
  'date-time': { type: 'string', validate: isStorableDateTime },
};
