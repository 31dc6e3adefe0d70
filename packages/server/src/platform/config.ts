/**
 * Configuration from the environment (docs/design.md §7), validated once at start. A mistake stops the start
 * with one line per variable, naming it; nothing else reads process.env.
 */
import { resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** Express's named ranges, accepted in TRUST_PROXY next to addresses and CIDR ranges. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
/** The shortest prefix a trusted range may have: /8 of IPv4 (10.0.0.0/8), /7 of IPv6 (fc00::/7). */
const MIN_PREFIX = { ipv4: 8, ipv6: 7 } as const;
const MAPPED_IPV4 = ipaddr.parseCIDR('::ffff:0:0/96') as [ipaddr.IPv6, number];

/**
 * An address or CIDR range written the usual way (IPv4 as four decimal parts: `100` or `127.1` would be
 * read as 0.0.0.100 and 127.0.0.1), not so wide that it would trust nearly any peer (a /0, or anything
 * wider than a /8 of IPv4 or a /7 of IPv6, or an IPv6 range holding every IPv4-mapped address).
 */
const isProxyAddress = (entry: string): boolean => {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  if (rest.length > 0 || !address) return false;
  if (ipaddr.IPv4.isValid(address) && !ipaddr.IPv4.isValidFourPartDecimal(address)) return false;
  if (!ipaddr.isValid(address)) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  let range: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    range = ipaddr.parseCIDR(entry);
  } catch {
    return false;
  }
  const [net, bits] = range;
  if (net.kind() === 'ipv4') return bits >= MIN_PREFIX.ipv4;
  const v6 = net as ipaddr.IPv6;
  // Express matches an IPv4 client against an IPv6 range as its IPv4-mapped address (::ffff:a.b.c.d).
  if (bits <= 96 && MAPPED_IPV4[0].match(v6, bits)) return false;
  if (bits > 96 && v6.isIPv4MappedAddress()) return bits - 96 >= MIN_PREFIX.ipv4;
  return bits >= MIN_PREFIX.ipv6;
};

/**
 * Which client address counts behind a reverse proxy (Express's `trust proxy`): off (the socket's peer),
 * a hop count, or the proxies' addresses. `true` (trust whatever X-Forwarded-For says) is refused: any
 * client could then pick the address its failed authentications are counted against; so is any range
 * that trusts (nearly) every peer the same way (`::/0,0.0.0.0/0`), and a bare number that is not a hop
 * count (1-99): `100` is not the address 0.0.0.100.
 */
const trustProxy = z
  .string()
  .transform((v, ctx): false | number | string[] => {
    const value = v.trim().toLowerCase();
    if (['false', 'off', 'no', '0'].includes(value)) return false;
    if (/^[1-9]\d?$/.test(value)) return Number(value);
    const entries = value.split(',').map((e) => e.trim()).filter(Boolean);
    if (entries.length > 0 && entries.every(isProxyAddress)) return entries;
    ctx.addIssue({
      code: 'custom',
      message: "must be false, a hop count (1-99) or the proxies' addresses/CIDR ranges (IPv4 as four decimal parts, no range wider than /8 of IPv4 or /7 of IPv6), comma-separated",
    });
    return z.NEVER;
  });

const schema = z.object({
  PORT: z.coerce.number({ message: 'must be a port number' }).int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('.data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  ADMIN_API_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  METRICS_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  VAULT_ENCRYPTION_KEY: z.string().min(1).optional(),
  SANDBOX: bool.optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' }).optional(),
  NODE_ENV: z.string().optional(),
  VALIDATE_RESPONSES: bool.optional(),
  DATABASE_POOL_SIZE: z.coerce.number({ message: 'must be a whole number from 1 to 200' }).int().min(1).max(200).default(10),
  RATE_LIMIT_PER_MINUTE: z.coerce.number({ message: 'must be a whole number (0 turns limiting off)' }).int().min(0).default(6000),
  CREDENTIAL_CACHE_SECONDS: z.coerce.number({ message: 'must be a whole number from 0 to 60 (0 turns the cache off)' }).int().min(0).max(60).default(5),
  RATE_LIMIT_STORE: z.enum(['memory', 'database'], { message: 'must be memory or database' }).optional(),
  AUTH_FAILURES_PER_MINUTE: z.coerce.number({ message: 'must be a whole number (0 turns limiting off)' }).int().min(0).default(60),
  TRUST_PROXY: trustProxy.default(false),
  HOSTED_RATE_LIMIT_PER_ADDRESS: z.coerce.number({ message: 'must be a whole number (0 turns limiting off)' }).int().min(0).default(120),
  HOSTED_RATE_LIMIT_PER_ORGANIZATION: z.coerce.number({ message: 'must be a whole number (0 turns limiting off)' }).int().min(0).default(3000),
  PUBLIC_KEY_RATE_LIMIT_PER_MINUTE: z.coerce.number({ message: 'must be a whole number (0 turns limiting off)' }).int().min(0).default(1200),
  CHECKOUT_SESSION_RATE_LIMIT_PER_MINUTE: z.coerce.number({ message: 'must be a whole number (0 turns limiting off)' }).int().min(0).default(30),
  CHECKOUT_SESSION_MAX_CARDS: z.coerce.number({ message: 'must be a whole number from 1 to 1000' }).int().min(1).max(1000).default(20),
  SANDBOX_A_URL: z.url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' }).optional(),
  SANDBOX_B_URL: z.url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' }).optional(),
  PROVIDER_TIMEOUT_MS: z.coerce.number({ message: 'must be a whole number of milliseconds from 100 to 120000' }).int().min(100).max(120_000).default(10_000),
  CIRCUIT_COOL_DOWN_MS: z.coerce.number({ message: 'must be a whole number of milliseconds from 100 to 3600000' }).int().min(100).max(3_600_000).default(30_000),
  PROVIDER_LOOKUP_TIMEOUT_MS: z.coerce.number({ message: 'must be a whole number of milliseconds from 100 to 30000' }).int().min(100).max(30_000).default(5_000),
  RECONCILIATION_INTERVAL_MS: z.coerce.number({ message: 'must be a whole number of milliseconds from 100 to 3600000' }).int().min(100).max(3_600_000).default(5_000),
  /** How long after an attempt's creation a "not found" lookup at a provider that does not close the reference is final (orchestration/settle.ts NOT_FOUND_SETTLE_MS). */
  RECONCILIATION_NOT_FOUND_SETTLE_MS: z.coerce.number({ message: 'must be a whole number of milliseconds from 60000 to 86400000' }).int().min(60_000).max(86_400_000).default(15 * 60_000),
});

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Connections in the pg pool (DATABASE_URL only). */
  databasePoolSize: number;
  adminApiKey: string | undefined;
  /** The bearer token GET /metrics requires; unset, /metrics does not exist. */
  metricsToken: string | undefined;
  vaultEncryptionKey: string | undefined;
  sandbox: boolean;
  logLevel: string;
  /**
   * The address clients reach the service at, for every link it hands out (brand icons, redirect pages):
   * never the request's Host header, which the client chooses. Required outside sandbox mode; in
   * sandbox mode startServer sets it to the listening address when it is not configured.
   */
  publicBaseUrl: string | undefined;
  /** Validate every response against the spec (on outside production; a mismatch becomes a 500). */
  validateResponses: boolean;
  /** How long an active API key is trusted without asking the database again (0: always ask). */
  credentialCacheSeconds: number;
  /** Requests per minute per organization (0: off). */
  rateLimitPerMinute: number;
  /** Where counters live: the database (holds across instances; default with DATABASE_URL) or the process. */
  rateLimitStore: 'memory' | 'database';
  /** Failed authentications per minute per client address before 429 (0: off). */
  authFailuresPerMinute: number;
  /** Express's `trust proxy`: false (the socket's peer), a hop count, or the proxies' addresses. */
  trustProxy: false | number | string[];
  /**
   * The unauthenticated checkout surface (the hosted pages /checkout/… and the public-key API routes),
   * per minute (0: off): requests per client address, hosted-page requests per organization, public-key
   * requests per public key, and public-key requests per checkout or customer session.
   */
  hostedRateLimitPerAddress: number;
  hostedRateLimitPerOrganization: number;
  publicKeyRateLimitPerMinute: number;
  checkoutSessionRateLimitPerMinute: number;
  /** Cards one checkout session tokenizes, or one customer session enrolls, in its life. */
  checkoutSessionMaxCards: number;
  /**
   * Where the sandbox acquirers run (acquirers-main.ts); unset, the service starts them itself on
   * loopback, ephemeral ports. Their ledgers live in the process that runs them.
   */
  sandboxAUrl: string | undefined;
  sandboxBUrl: string | undefined;
  /**
   * Where each real provider's API is reached when not at its public address, by connector id
   * (STRIPE_API_URL, ADYEN_API_URL, MERCADO_PAGO_API_URL): a proxy, or in tests a local double.
   */
  providerApiUrls: Readonly<Record<string, string | undefined>>;
  /** How long a provider call waits for its answer when the call names no connection (ms). */
  providerTimeoutMs: number;
  /** How long an open circuit (a connection found down) is skipped before one probe call (orchestration/circuit-breaker.ts). */
  circuitCoolDownMs: number;
  /** How often the reconciliation worker looks for provider attempts with an unknown outcome. */
  reconciliationIntervalMs: number;
  /**
   * How long reconciliation waits for a provider's answer (lookups, voids of late approvals): the
   * service's bound, never a connection's merchant-set timeout_ms, so no tenant can make its lookups hang.
   */
  providerLookupTimeoutMs: number;
  /** RECONCILIATION_NOT_FOUND_SETTLE_MS: "not found" is final only this long after the attempt was created, where a lookup does not close the reference. */
  reconciliationNotFoundSettleMs: number;
}

export class ConfigError extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join('\n'));
    this.name = 'ConfigError';
  }
}

export const PUBLIC_BASE_URL_REQUIRED =
  'invalid configuration: PUBLIC_BASE_URL is required outside sandbox mode (the https:// address clients reach this service at; links are never built from the Host header)';

/**
 * `<PROVIDER>_API_URL` (STRIPE_API_URL, ADYEN_API_URL, MERCADO_PAGO_API_URL, and the same for any connector
 * added later): where that provider's API is reached instead of its public host, by connector id. Read by
 * pattern, so a new connector needs no line here (turbo.json passes `*_API_URL` through).
 */
const PROVIDER_API_URL = /^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)_API_URL$/;
const providerApiUrl = z.url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' });

function providerApiUrls(env: Record<string, string | undefined>): { urls: Record<string, string>; errors: string[] } {
  const urls: Record<string, string> = {};
  const errors: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    const id = PROVIDER_API_URL.exec(name)?.[1];
    if (id === undefined || value === undefined) continue;
    const checked = providerApiUrl.safeParse(value);
    if (checked.success) urls[id] = checked.data.replace(/\/+$/, '');
    else errors.push(`invalid configuration: ${name} must be an absolute http(s) URL`);
  }
  return { urls, errors };
}

/** Parses the environment; throws ConfigError with one line per invalid variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(cleaned);
  const apiUrls = providerApiUrls(cleaned);
  if (!parsed.success || apiUrls.errors.length > 0) {
    const lines = (parsed.error?.issues ?? []).map((i) => `invalid configuration: ${String(i.path[0])} ${i.message}`);
    throw new ConfigError([...new Set([...lines, ...apiUrls.errors])]);
  }
  const e = parsed.data;
  // Sandbox is the default with the embedded database, off with a real server unless asked for.
  const sandbox = e.SANDBOX ?? e.DATABASE_URL === undefined;
  if (!sandbox && e.PUBLIC_BASE_URL === undefined) {
    throw new ConfigError([PUBLIC_BASE_URL_REQUIRED]);
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    adminApiKey: e.ADMIN_API_KEY,
    metricsToken: e.METRICS_TOKEN,
    vaultEncryptionKey: e.VAULT_ENCRYPTION_KEY,
    sandbox,
    logLevel: e.LOG_LEVEL,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    validateResponses: e.VALIDATE_RESPONSES ?? e.NODE_ENV !== 'production',
    credentialCacheSeconds: e.CREDENTIAL_CACHE_SECONDS,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    rateLimitStore: e.RATE_LIMIT_STORE ?? (e.DATABASE_URL ? 'database' : 'memory'),
    authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
    trustProxy: e.TRUST_PROXY,
    hostedRateLimitPerAddress: e.HOSTED_RATE_LIMIT_PER_ADDRESS,
    hostedRateLimitPerOrganization: e.HOSTED_RATE_LIMIT_PER_ORGANIZATION,
    publicKeyRateLimitPerMinute: e.PUBLIC_KEY_RATE_LIMIT_PER_MINUTE,
    checkoutSessionRateLimitPerMinute: e.CHECKOUT_SESSION_RATE_LIMIT_PER_MINUTE,
    checkoutSessionMaxCards: e.CHECKOUT_SESSION_MAX_CARDS,
    sandboxAUrl: e.SANDBOX_A_URL?.replace(/\/+$/, ''),
    sandboxBUrl: e.SANDBOX_B_URL?.replace(/\/+$/, ''),
    providerApiUrls: apiUrls.urls,
    providerTimeoutMs: e.PROVIDER_TIMEOUT_MS,
    circuitCoolDownMs: e.CIRCUIT_COOL_DOWN_MS,
    reconciliationIntervalMs: e.RECONCILIATION_INTERVAL_MS,
    providerLookupTimeoutMs: e.PROVIDER_LOOKUP_TIMEOUT_MS,
    reconciliationNotFoundSettleMs: e.RECONCILIATION_NOT_FOUND_SETTLE_MS,
  };
}

/** The base of every link the service hands out (PUBLIC_BASE_URL, or in sandbox mode the listening address). */
export function linkBase(config: Pick<Config, 'publicBaseUrl'>): string {
  if (config.publicBaseUrl === undefined) throw new Error('PUBLIC_BASE_URL is unresolved: the server sets it when it starts listening');
  return config.publicBaseUrl;
}
