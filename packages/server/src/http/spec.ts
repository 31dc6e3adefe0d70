/**
 * The bundled OpenAPI document (generated into @payorch/types) and the operation index derived from it:
 * which operation a method + path is, its security, whether it is idempotency-keyed, its body limit.
 * The spec is the only place these facts are declared.
 */
import { createRequire } from 'node:module';
import type { OperationId } from '@payorch/types';

const require = createRequire(import.meta.url);

export type OpenApiDocument = {
  servers?: { url: string }[];
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
};

/** A fresh copy of the bundled spec (the validator mutates what it is given). */
export function loadSpec(): OpenApiDocument {
  return structuredClone(require('@payorch/types/openapi.json') as OpenApiDocument);
}

/**
 * Forgets the bundled spec read so far, so the next loadSpec() reads the file again: the designer's loop
 * reloads a spec-only change without restarting the process (server.ts reloadSpec).
 */
export function forgetLoadedSpec(): void {
  delete require.cache[require.resolve('@payorch/types/openapi.json')];
}

/**
 * `public`: the organization's public key alone (`public-api-key`), for the calls a shopper's browser makes
 * (a checkout session's one-time token, a customer session's enrollment); the session id in the path is the
 * capability. Every other merchant operation needs the key pair.
 */
export type SecurityKind = 'merchant' | 'public' | 'admin' | 'none';

export interface OperationInfo {
  operationId: OperationId;
  method: string;
  /** OpenAPI path template relative to the base path: '/customers/{customer_id}/payment-methods'. */
  template: string;
  /** The same for Express: '/customers/:customer_id/payment-methods'. */
  expressPath: string;
  pattern: RegExp;
  /** The template's path parameter names, in the order of the pattern's groups. */
  paramNames: string[];
  security: SecurityKind;
  /**
   * Declares an X-Idempotency-Key header: a request that sends one runs through the idempotency mechanism.
   * Required on most; optional on an operation idempotent by nature (unenroll), which without a key just runs.
   */
  idempotent: boolean;
  /** The X-Idempotency-Key header is required (a request without one is a 400). */
  idempotencyKeyRequired: boolean;
  /** Largest JSON body accepted (bytes): `x-body-limit` on the operation, else the default. */
  bodyLimit: number;
}

export const DEFAULT_BODY_LIMIT = 100 * 1024;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

type RawParam = { name?: string; in?: string; required?: boolean; $ref?: string };
type RawOperation = {
  operationId: OperationId;
  security?: Record<string, string[]>[];
  parameters?: RawParam[];
  'x-body-limit'?: number;
};

/**
 * Where the API lives under the public origin (the spec's server URL), for links built without the spec at
 * hand: brand icons, the sandbox's enrollment and wallet pages.
 */
export const API_BASE_PATH = '/v1';

export function basePath(spec: OpenApiDocument): string {
  const url = spec.servers?.[0]?.url ?? '/';
  return new URL(url, 'http://base').pathname.replace(/\/+$/, '');
}

export function indexOperations(spec: OpenApiDocument): OperationInfo[] {
  const resolveParam = (p: RawParam): RawParam => {
    if (!p.$ref) return p;
    const name = p.$ref.replace('#/components/parameters/', '');
    return ((spec.components as { parameters?: Record<string, RawParam> } | undefined)?.parameters?.[name] ?? p) as RawParam;
  };
  const ops: OperationInfo[] = [];
  for (const [template, item] of Object.entries(spec.paths)) {
    const pathParams = ((item.parameters as RawParam[] | undefined) ?? []).map(resolveParam);
    for (const method of METHODS) {
      const op = item[method] as RawOperation | undefined;
      if (!op) continue;
      const params = [...pathParams, ...(op.parameters ?? []).map(resolveParam)];
      const security = op.security ?? spec.security ?? [];
      ops.push({
        operationId: op.operationId,
        method,
        template,
        expressPath: template.replace(/\{([^}]+)\}/g, ':$1'),
        pattern: templatePattern(template),
        paramNames: [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        security: securityKind(security),
        idempotent: params.some((p) => p.in === 'header' && p.name?.toLowerCase() === 'x-idempotency-key'),
        idempotencyKeyRequired: params.some((p) => p.in === 'header' && p.name?.toLowerCase() === 'x-idempotency-key' && p.required === true),
        bodyLimit: op['x-body-limit'] ?? DEFAULT_BODY_LIMIT,
      });
    }
  }
  return ops;
}

function securityKind(security: Record<string, string[]>[]): SecurityKind {
  if (security.length === 0) return 'none';
  if (security.some((s) => 'adminApiKey' in s)) return 'admin';
  // Public only when no alternative asks for the secret key.
  if (security.every((s) => 'publicApiKey' in s && !('privateSecretKey' in s))) return 'public';
  return 'merchant';
}

function templatePattern(template: string): RegExp {
  const literals = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literals.join('([^/]+)')}/?$`);
}

/**
 * The operation's path parameters in `path` (relative to the base path), percent-decoded; undefined for
 * a segment that is not percent-encoded UTF-8 (refused before validation, see storable-strings.ts).
 */
export function pathParamsOf(op: OperationInfo, path: string): Record<string, string | undefined> {
  const values = op.pattern.exec(path);
  const params: Record<string, string | undefined> = {};
  for (const [i, name] of op.paramNames.entries()) {
    try {
      params[name] = decodeURIComponent(values?.[i + 1] ?? '');
    } catch {
      params[name] = undefined;
    }
  }
  return params;
}

export type OperationMatch =
  | { kind: 'operation'; operation: OperationInfo }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

/**
 * Which operation answers `method path` (path relative to the base path). When several templates match,
 * a literal segment beats a parameter at the first place they differ (`/customers/list` before
 * `/customers/{customer_id}`), whatever their order in the spec: the order express-openapi-validator
 * validates by (its sortRoutes ranks a parameter as `~`, after every literal). Its methods alone decide a 405.
 */
export function matchOperation(ops: readonly OperationInfo[], method: string, path: string): OperationMatch {
  const m = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const matching = ops.filter((o) => o.pattern.test(path));
  if (matching.length === 0) return { kind: 'not-found' };
  const rank = (o: OperationInfo) => o.template.replace(/\{[^}]+\}/g, '~');
  const template = matching.reduce((best, o) => (rank(o) < rank(best) ? o : best)).template;
  const onPath = matching.filter((o) => o.template === template);
  const hit = onPath.find((o) => o.method === m);
  if (hit) return { kind: 'operation', operation: hit };
  return { kind: 'method-not-allowed', allow: onPath.map((o) => o.method.toUpperCase()) };
}
