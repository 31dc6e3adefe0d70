import type { Migration } from '../migrate.js';
import platform from './0001_platform.js';

/** Every migration, in order. Add a new file (next number) and list it here; never edit an applied one. */
export const migrations: readonly Migration[] = [platform];
