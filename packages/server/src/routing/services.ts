import type { Keyring } from '../vault/crypto/keyring.js';
import { createConnectionBox, type ConnectionBox } from './connection-secrets.js';

declare module '../context.js' {
  interface AppServices {
    /** Seals and opens provider connection credentials (routing/connection-secrets.ts). */
    connectionBox: ConnectionBox;
  }
}

export function buildRoutingServices(vaultKeyring: Keyring) {
  return { connectionBox: createConnectionBox(vaultKeyring) };
}
