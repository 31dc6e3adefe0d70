/**
 * The vault's key material. `VAULT_ENCRYPTION_KEY` is a keyring, newest first:
 *
 *   k2:<base64 of 32 bytes>,k1:<base64 of 32 bytes>   (k2 encrypts; k2 and k1 decrypt)
 *   <base64 of 32 bytes>                              (one key, id k1)
 *
 * Rotation: prepend a new key; rows keep the id of the key that encrypted them, so old rows still
 * decrypt. In sandbox mode without the variable a key is generated once into <DATA_DIR>/vault-key.json
 * (mode 0600); outside sandbox mode a missing key stops the start.
 *
 * src/keyring/ holds what every domain that keeps a secret readable seals with: this keyring, AES-256-GCM
 * (cipher.ts) and a key derived per purpose (secret-box.ts). It sits below them all (the card vault, whose
 * keyring it is, webhooks, routing, checkout, the sandbox providers), so sealing a secret imports nothing
 * of the card vault; the vault's own envelope keys and card fingerprints stay in vault/crypto/.
 */
import { randomBytes } from 'node:crypto';
import { chmod, link, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensurePrivateDir } from '../platform/private-files.js';

export interface VaultKey {
  id: string;
  /** 32 bytes (AES-256). */
  material: Buffer;
}

export interface Keyring {
  /** Encrypts new data. */
  active: VaultKey;
  /** Every key, for decryption (active first). */
  keys: readonly VaultKey[];
  byId: ReadonlyMap<string, VaultKey>;
  /** Where the keys came from, for the start log line (never the keys). */
  source: 'environment' | 'sandbox-key-file';
}

export class VaultKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VaultKeyError';
  }
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeKey(id: string, b64: string, where: string): VaultKey {
  if (!KEY_ID.test(id)) throw new VaultKeyError(`${where}: key id "${id.slice(0, 40)}" must be 1–32 letters, digits, _ or -`);
  if (!STRICT_BASE64.test(b64)) throw new VaultKeyError(`${where}: key ${id} is not standard base64`);
  const material = Buffer.from(b64, 'base64');
  if (material.length !== 32) throw new VaultKeyError(`${where}: key ${id} must decode to 32 bytes, got ${material.length}`);
  return { id, material };
}

function ring(keys: VaultKey[], source: Keyring['source']): Keyring {
  const byId = new Map<string, VaultKey>();
  for (const k of keys) {
    if (byId.has(k.id)) throw new VaultKeyError(`invalid configuration: VAULT_ENCRYPTION_KEY lists key id ${k.id} twice`);
    byId.set(k.id, k);
  }
  return { active: keys[0]!, keys, byId, source };
}

/** Parses VAULT_ENCRYPTION_KEY; throws VaultKeyError naming the variable (never echoing key material). */
export function parseKeyring(value: string): Keyring {
  const where = 'invalid configuration: VAULT_ENCRYPTION_KEY';
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0);
  if (entries.length === 0) throw new VaultKeyError(`${where} is empty`);
  if (entries.length === 1 && !entries[0]!.includes(':')) return ring([decodeKey('k1', entries[0]!, where)], 'environment');
  const keys = entries.map((entry) => {
    const colon = entry.indexOf(':');
    if (colon <= 0) throw new VaultKeyError(`${where}: each entry of a keyring is <id>:<base64 key>`);
    return decodeKey(entry.slice(0, colon), entry.slice(colon + 1), where);
  });
  return ring(keys, 'environment');
}

interface KeyFile {
  keys: { id: string; key: string }[];
}

/**
 * The sandbox key file: created once (atomically: written aside, then hard-linked into place, so two
 * processes starting together end up with the same key), then reused. Mode 0600.
 */
export async function loadOrCreateSandboxKeyring(dataDir: string): Promise<{ keyring: Keyring; file: string; created: boolean }> {
  await ensurePrivateDir(dataDir);
  const file = join(dataDir, 'vault-key.json');
  let created = false;
  const fresh: KeyFile = { keys: [{ id: 'k1', key: randomBytes(32).toString('base64') }] };
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(aside, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(aside, file);
    created = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(aside).catch(() => {});
  }
  // Never leave card keys readable by others, even if someone loosened the mode.
  if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
  let parsed: KeyFile;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8')) as KeyFile;
  } catch {
    throw new VaultKeyError(`the sandbox vault key file ${file} is not valid JSON; restore it or set VAULT_ENCRYPTION_KEY`);
  }
  if (!Array.isArray(parsed.keys) || parsed.keys.length === 0) throw new VaultKeyError(`the sandbox vault key file ${file} holds no keys`);
  const keys = parsed.keys.map((k) => decodeKey(String(k.id), String(k.key), `the sandbox vault key file ${file}`));
  return { keyring: ring(keys, 'sandbox-key-file'), file, created };
}

/** The keyring for this process: the variable, else the sandbox file, else a clear start failure. */
/** The process's keyring, and the sandbox key file it came from (if any). */
export interface ResolvedKeyring {
  keyring: Keyring;
  file?: string;
  created?: boolean;
}

export async function resolveKeyring(config: { vaultEncryptionKey: string | undefined; sandbox: boolean; dataDir: string }): Promise<ResolvedKeyring> {
  if (config.vaultEncryptionKey !== undefined) return { keyring: parseKeyring(config.vaultEncryptionKey) };
  if (!config.sandbox) {
    throw new VaultKeyError(
      'invalid configuration: VAULT_ENCRYPTION_KEY is required outside sandbox mode (base64 of 32 random bytes, e.g. `openssl rand -base64 32`, or a keyring k2:<key>,k1:<key>)',
    );
  }
  return loadOrCreateSandboxKeyring(config.dataDir);
}
