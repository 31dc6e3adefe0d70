/**
 * A headless Chromium for browser tests, driven by playwright-core, with nothing to install by hand:
 *
 *   const browser = await launchBrowser();   // close it in afterAll: await browser.close()
 *   const page = await browser.newPage();
 *
 * Which Chromium (findChromiums(): CHROMIUM_PATH alone, otherwise 2 and 3, each where available):
 *   1. CHROMIUM_PATH — an explicit choice; a missing file is an error, never a silent fallback;
 *   2. a system Chromium at /usr/bin/chromium (Debian's package), kept up to date by the distribution;
 *   3. the Chromium inside the `@sparticuz/chromium` npm package (Linux x64 only; a headless shell with
 *      its own NSS libraries, SwiftShader and a font), so `npm install && npm test` work on a machine
 *      with nothing but Node and npm. Nothing is downloaded: its brotli files are unpacked once per
 *      version into node_modules/.cache/payorch-chromium/<version> (~230 MB, a few seconds).
 *
 * The launch arguments are ours, for every source: not the package's serverless defaults, which turn
 * web security off (same-origin policy, CSP), and a browser test must see what a user's browser sees.
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';
import { chromium, type Browser, type LaunchOptions } from 'playwright-core';
import { extract, type ExtractOptions } from 'tar-fs';

export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** Flags for a test browser: headless, no sandbox (CI runs as root), no traffic of its own. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface ChromiumExecutable {
  /** The binary to launch. */
  path: string;
  /** Where it came from, for messages: `CHROMIUM_PATH`, `system` or `@sparticuz/chromium@<version>`. */
  source: string;
  /** Extra environment for the browser process (the bundled Chromium's libraries and fonts). */
  env: Record<string, string>;
}

/**
 * Launches a headless Chromium: `exe` (one of findChromiums()) or else the first that applies (see the file
 * comment). `options` are playwright's; its `args` come after CHROMIUM_ARGS. The caller closes the browser.
 */
export async function launchBrowser(options: Omit<LaunchOptions, 'executablePath'> = {}, exe?: ChromiumExecutable): Promise<Browser> {
  const chosen = exe ?? (await findChromium());
  return chromium.launch({
    headless: true,
    ...options,
    args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
    executablePath: chosen.path,
    env: { ...(process.env as Record<string, string>), ...chosen.env, ...options.env },
  });
}

let found: Promise<ChromiumExecutable[]> | undefined;

/**
 * Every Chromium the browser tests run with: CHROMIUM_PATH alone when it is set; otherwise the system one
 * when installed and the npm-bundled one (unpacked on first use). Browser tests run their assertions once
 * per browser, so a difference between the full browser and the headless shell (the full one asks for
 * /favicon.ico, the shell does not) fails at once, on whichever machine has both.
 */
export function findChromiums(): Promise<ChromiumExecutable[]> {
  found ??= locate();
  return found;
}

/** The first of findChromiums(). */
export async function findChromium(): Promise<ChromiumExecutable> {
  return (await findChromiums())[0]!;
}

async function locate(): Promise<ChromiumExecutable[]> {
  const explicit = process.env.CHROMIUM_PATH;
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`CHROMIUM_PATH is set to ${explicit}, which does not exist`);
    return [{ path: explicit, source: 'CHROMIUM_PATH', env: {} }];
  }
  const all: ChromiumExecutable[] = [];
  if (existsSync(SYSTEM_CHROMIUM)) all.push({ path: SYSTEM_CHROMIUM, source: 'system', env: {} });
  if (process.platform === 'linux' && process.arch === 'x64') all.push(await unpackBundled());
  if (all.length === 0) {
    throw new Error(
      `no Chromium for the browser tests: the npm-bundled one (@sparticuz/chromium) is Linux x64 only, this is ${process.platform} ${process.arch}; ` +
        'set CHROMIUM_PATH to a Chromium or Chrome binary',
    );
  }
  return all;
}

// As root, tar-fs would give the files the archive's owner (a uid of the package's build machine).
const OWN_FILES = { chown: false } as ExtractOptions;

/** Unpacks @sparticuz/chromium's files once per version; concurrent test processes race safely. */
async function unpackBundled(): Promise<ChromiumExecutable> {
  const pkgDir = packageDir('@sparticuz/chromium');
  const { version } = JSON.parse(await readFile(join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  // <root>/node_modules/@sparticuz/chromium → <root>/node_modules/.cache/payorch-chromium/<version>
  const dir = join(pkgDir, '..', '..', '.cache', 'payorch-chromium', version);
  const result: ChromiumExecutable = {
    path: join(dir, 'chromium'),
    source: `@sparticuz/chromium@${version}`,
    // Its own NSS/NSPR/expat (built for Amazon Linux, fine on any glibc Linux) and a fontconfig that
    // adds the bundled Open Sans to the system's fonts, so pages render on a machine without either.
    env: { LD_LIBRARY_PATH: [join(dir, 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'), FONTCONFIG_FILE: join(dir, 'fonts.conf') },
  };
  if (existsSync(result.path)) return result;

  // Unpack beside the final place, then rename: a directory appears whole or not at all.
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  await mkdir(tmp, { recursive: true });
  try {
    const bin = join(pkgDir, 'bin');
    await Promise.all([
      pipeline(createReadStream(join(bin, 'chromium.br')), createBrotliDecompress(), createWriteStream(join(tmp, 'chromium'), { mode: 0o755 })),
      // lib/ (NSS …), libGLESv2.so & co. (SwiftShader, loaded from the binary's directory), fonts/.
      ...['al2023.tar.br', 'swiftshader.tar.br', 'fonts.tar.br'].map((f) => pipeline(createReadStream(join(bin, f)), createBrotliDecompress(), extract(tmp, OWN_FILES))),
    ]);
    await writeFile(
      join(tmp, 'fonts.conf'),
      '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n' +
        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n' +
        `  <dir>${join(dir, 'fonts')}</dir>\n  <cachedir>${join(dir, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
    );
    await rename(tmp, dir).catch((err: NodeJS.ErrnoException) => {
      // Another process finished first: use its copy.
      if (!(err.code === 'ENOTEMPTY' || err.code === 'EEXIST') || !existsSync(result.path)) throw err;
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return result;
}

/** The directory of an installed package (its package.json need not be exported). */
function packageDir(name: string): string {
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  while (!existsSync(join(dir, 'package.json')) || !dir.endsWith(join('node_modules', name))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the directory of ${name}`);
    dir = up;
  }
  return dir;
}
