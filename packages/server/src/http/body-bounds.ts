/**
 * Bounds what request validation has to look at, whatever the body's shape.
 *
 * The validator collects every error (so a client learns every bad field at once), and with that ajv
 * checks every item of an array past its `maxItems` and reports every unknown member of an object, at a
 * cost that grows with the square of the count (20,000 items in a 60 KB body blocked the event loop for
 * 30 s). Before it runs, this walks the parsed body along the operation's request schema and clips every
 * array longer than the longest the schema admits there to that length plus one, and every object with
 * more members than the schema admits to that many plus one (the members the schema names are kept
 * first). The validator then sees a body of a size the spec bounds, and still names every bad field,
 * the clipped array and object included: one item or member past the bound is enough for its error.
 * A clipped body is always invalid; should it ever pass, it is refused here rather than handled.
 *
 * Everything comes from the spec (`maxItems`; `maxProperties`, or the declared properties of a closed
 * object), so every request schema is covered, and the Spectral rule `payorch-bounded-collections`
 * makes sure each array and free-form object has its bound.
 */
import type { RequestHandler } from 'express';
import { pointer } from './storable-strings.js';
import { describeFieldErrors, problem, problemBody, ProblemError, type FieldError } from './problems.js';
import { sendProblem } from './send.js';
import type { OpenApiDocument, OperationInfo } from './spec.js';

type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  items?: Schema;
  maxItems?: number;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  patternProperties?: Record<string, Schema>;
  maxProperties?: number;
  required?: string[];
};

/**
 * What a place in the body may hold, merged over the schema's alternatives (oneOf/anyOf/allOf), so that
 * a bound here is never tighter than any alternative's. `undefined` bounds: no alternative admits an
 * array (object) here, so the validator refuses one by its type without looking inside.
 */
interface Shape {
  /** The most JSON values (this one, and every item and member inside) a valid body holds here. */
  maxValues: number;
  maxItems?: number;
  items?: Shape;
  maxMembers?: number;
  members: Map<string, Shape>;
  otherMembers?: Shape;
}

const UNBOUNDED = Number.POSITIVE_INFINITY;
/** Deeper than any request schema nests (and than rejectUnstorableStrings lets a body nest). */
const MAX_SCHEMA_DEPTH = 40;

/** Follows local `$ref`s (`#/components/...`) of the bundled spec. */
function resolve<T extends { $ref?: string }>(spec: OpenApiDocument, node: T): T {
  let at = node;
  for (let hops = 0; at.$ref !== undefined && hops < 32; hops++) {
    at = at.$ref
      .split('/')
      .slice(1)
      .reduce<unknown>((o, k) => (o as Record<string, unknown>)[k.replaceAll('~1', '/').replaceAll('~0', '~')], spec) as T;
  }
  return at;
}

function compile(spec: OpenApiDocument, schemas: Schema[], depth: number): Shape | undefined {
  if (depth > MAX_SCHEMA_DEPTH) return undefined;
  // Flatten the alternatives: the union of what they admit (an allOf part is treated as one too, which only loosens).
  const flat: Schema[] = [];
  const add = (s: Schema) => {
    const r = resolve(spec, s);
    const subs = [...(r.oneOf ?? []), ...(r.anyOf ?? []), ...(r.allOf ?? [])];
    if (subs.length > 0) subs.forEach(add);
    if (subs.length === 0 || r.type !== undefined || r.items || r.properties) flat.push(r);
  };
  schemas.forEach(add);

  const admits = (s: Schema, type: 'array' | 'object') =>
    s.type === undefined ? s.enum === undefined && s.const === undefined : Array.isArray(s.type) ? s.type.includes(type) : s.type === type;
  const shape: Shape = { maxValues: 1, members: new Map() };
  const itemSchemas: Schema[] = [];
  const memberSchemas = new Map<string, Schema[]>();
  const otherSchemas: Schema[] = [];
  for (const s of flat) {
    if (admits(s, 'array')) {
      shape.maxItems = Math.max(shape.maxItems ?? 0, s.maxItems ?? UNBOUNDED);
      if (s.items) itemSchemas.push(s.items);
    }
    if (admits(s, 'object')) {
      const closed = s.additionalProperties === false && s.patternProperties === undefined;
      const declared = Object.keys(s.properties ?? {}).length;
      shape.maxMembers = Math.max(shape.maxMembers ?? 0, s.maxProperties ?? (closed ? declared : UNBOUNDED));
      for (const [name, sub] of Object.entries(s.properties ?? {})) memberSchemas.set(name, [...(memberSchemas.get(name) ?? []), sub]);
      if (typeof s.additionalProperties === 'object') otherSchemas.push(s.additionalProperties);
    }
  }
  if (itemSchemas.length > 0) shape.items = compile(spec, itemSchemas, depth + 1);
  for (const [name, subs] of memberSchemas) {
    const member = compile(spec, subs, depth + 1);
    if (member) shape.members.set(name, member);
  }
  if (otherSchemas.length > 0) shape.otherMembers = compile(spec, otherSchemas, depth + 1);
  const times = (n: number, each: number) => (n === 0 ? 0 : n * each);
  const inArray = shape.maxItems === undefined ? 0 : times(shape.maxItems, shape.items?.maxValues ?? UNBOUNDED);
  let inObject = 0;
  if (shape.maxMembers !== undefined) {
    for (const member of shape.members.values()) inObject += member.maxValues;
    if (shape.otherMembers || shape.maxMembers > shape.members.size) inObject += times(shape.maxMembers, shape.otherMembers?.maxValues ?? UNBOUNDED);
  }
  shape.maxValues = 1 + Math.max(inArray, inObject);
  return shape;
}

/** The JSON request body schema of each operation that has one. */
function requestShapes(spec: OpenApiDocument, ops: readonly OperationInfo[]): Map<string, Shape> {
  const shapes = new Map<string, Shape>();
  for (const op of ops) {
    const operation = spec.paths[op.template]?.[op.method] as { requestBody?: { $ref?: string; content?: Record<string, { schema?: Schema }> } } | undefined;
    const schema = operation?.requestBody && resolve(spec, operation.requestBody).content?.['application/json']?.schema;
    if (!schema) continue;
    const shape = compile(spec, [schema], 0);
    if (shape) shapes.set(op.operationId, shape);
  }
  return shapes;
}

/**
 * Clips `value` (in place where it can; the returned value replaces it) to what `shape` admits plus one
 * item or member, and records where it did.
 */
function clip(value: unknown, shape: Shape, path: string, clipped: FieldError[]): unknown {
  if (Array.isArray(value)) {
    if (shape.maxItems === undefined) return value;
    if (value.length > shape.maxItems + 1) {
      clipped.push({ path, message: `must NOT have more than ${shape.maxItems} items` });
      value.length = shape.maxItems + 1;
    }
    if (shape.items) for (let i = 0; i < value.length; i++) value[i] = clip(value[i], shape.items, `${path}/${i}`, clipped);
    return value;
  }
  if (value === null || typeof value !== 'object' || shape.maxMembers === undefined) return value;
  let object = value as Record<string, unknown>;
  const names = Object.keys(object);
  if (names.length > shape.maxMembers + 1) {
    clipped.push({ path, message: `must NOT have more than ${shape.maxMembers} properties` });
    // The members the schema names first (so no required one goes missing), then unknown ones.
    const keep = [...names.filter((n) => shape.members.has(n)), ...names.filter((n) => !shape.members.has(n))].slice(0, shape.maxMembers + 1);
    const kept: Record<string, unknown> = {};
    for (const name of keep) Object.defineProperty(kept, name, { value: object[name], enumerable: true, writable: true, configurable: true });
    object = kept;
  }
  for (const name of Object.keys(object)) {
    const member = shape.members.get(name) ?? shape.otherMembers;
    if (member) object[name] = clip(object[name], member, pointer(path, name), clipped);
  }
  return object;
}

/**
 * Counts the JSON values of a raw body (one per `[`, `{` and `,` outside strings: never fewer than the body
 * holds, less one) and stops at `limit`. Strings are skipped with a native search for their closing
 * quote, so a dispute's megabytes of base64 cost next to nothing; a body of tiny values is refused after
 * `limit` of them, before JSON.parse builds them all (a 1 MB object of 100,000 members costs ~80 ms of
 * CPU to parse and as much again to walk).
 */
export function exceedsValueCount(raw: Buffer, limit: number): boolean {
  let count = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === 0x22) {
      // The closing quote is the next one not escaped by an odd run of backslashes.
      for (;;) {
        i = raw.indexOf(0x22, i + 1);
        if (i === -1) return false; // unterminated: JSON.parse will say so
        let backslashes = 0;
        while (raw[i - 1 - backslashes] === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
      }
    } else if ((c === 0x2c || c === 0x5b || c === 0x7b) && ++count > limit) {
      return true;
    }
  }
  return false;
}

export interface BodyBounds {
  /** For body parsing (before JSON.parse): throws a 400 problem when the raw body holds far more values than any valid body of the operation. */
  checkRaw(operation: OperationInfo, raw: Buffer): void;
  /** Between rejectUnstorableStrings (which bounds the depth) and validation. */
  beforeValidation: RequestHandler;
  /** Right after validation. */
  afterValidation: RequestHandler;
}

export function boundBodyShape(spec: OpenApiDocument, ops: readonly OperationInfo[]): BodyBounds {
  const shapes = requestShapes(spec, ops);
  return {
    checkRaw(operation, raw) {
      const shape = shapes.get(operation.operationId);
      if (!shape || !Number.isFinite(shape.maxValues)) return;
      // Twice what a valid body can hold, and then some: an ordinary mistake (items or members too many)
      // still reaches the validator, which names every bad field; only a body that cannot be one stops here.
      const limit = 2 * shape.maxValues + 100;
      if (!exceedsValueCount(raw, limit)) return;
      const errors = [{ path: '/body', message: `holds more than ${limit} JSON values, where a valid body holds at most ${shape.maxValues}` }];
      throw new ProblemError(problem('INVALID_REQUEST', describeFieldErrors(errors), { errors }));
    },
    beforeValidation: (req, res, next) => {
      const shape = shapes.get((res.locals.operation as OperationInfo).operationId);
      if (!shape || req.body === undefined) return next();
      const clipped: FieldError[] = [];
      req.body = clip(req.body, shape, '/body', clipped);
      if (clipped.length > 0) res.locals.clippedBody = clipped;
      next();
    },
    // Unreachable by construction (a clipped array or object breaks its own bound); a guard, not a path.
    afterValidation: (req, res, next) => {
      const clipped = res.locals.clippedBody as FieldError[] | undefined;
      if (!clipped) return next();
      return sendProblem(req, res, 400, problemBody('INVALID_REQUEST', describeFieldErrors(clipped), { errors: clipped }));
    },
  };
}
