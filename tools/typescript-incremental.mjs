// One TypeScript project compiled in-process and kept warm (`tsc --watch` semantics, driven by the
// designer's loop instead of TypeScript's own file watchers): each build re-reads only the files whose
// mtime or size changed, type-checks only the files a change can affect (TypeScript's builder program)
// and emits only those. Its state is also saved to a .tsbuildinfo under node_modules/.cache, so the next
// `npm run dev` starts from it instead of checking everything again, unless something else (turbo, `tsc`)
// wrote the output directory since: then it builds from scratch, so dist/ is never left stale.
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import ts from 'typescript';

/** The newest mtime of any file under dir (0 when there is none). */
function newestIn(dir) {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (!e.isFile()) continue;
    const m = statSync(join(e.parentPath ?? e.path, e.name), { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (m > newest) newest = m;
  }
  return newest;
}

/**
 * @param {{ configPath: string, cacheDir: string, cwd?: string }} options
 *   configPath: the tsconfig; cacheDir: where the .tsbuildinfo goes; cwd: messages' paths are relative to it
 * @returns {{ build: () => { ok: boolean, output: string, checked: number, changedJs: number } }}
 *   changedJs: emitted JavaScript files whose content changed (0: the running code is still current;
 *   only declarations or nothing changed). A file emitted with the same content is not rewritten.
 */
export function createIncrementalProject({ configPath, cacheDir, cwd = process.cwd() }) {
  const files = new Map(); // fileName → { stamp, sourceFile }
  let builder;
  const formatHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => cwd, getNewLine: () => '\n' };

  return {
    build() {
      const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
      if (!parsed) return { ok: false, output: `error: cannot read ${configPath}`, checked: 0, changedJs: 0 };
      const tsBuildInfoFile = join(cacheDir, `${basename(dirname(configPath))}-${basename(configPath, '.json')}.tsbuildinfo`);
      const options = { ...parsed.options, incremental: true, tsBuildInfoFile };
      const host = ts.createIncrementalCompilerHost(options);
      const read = host.getSourceFile.bind(host);
      host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
        const st = statSync(fileName, { throwIfNoEntry: false });
        if (!st) {
          files.delete(fileName);
          return undefined;
        }
        const stamp = `${st.mtimeMs}:${st.size}`;
        const known = files.get(fileName);
        if (known?.stamp === stamp) return known.sourceFile;
        const sourceFile = read(fileName, languageVersion, onError, shouldCreate);
        if (sourceFile) files.set(fileName, { stamp, sourceFile });
        return sourceFile;
      };
      if (!builder) {
        // The saved state is only trusted when nothing wrote the output directory after it.
        const saved = statSync(tsBuildInfoFile, { throwIfNoEntry: false });
        if (saved && newestIn(options.outDir ?? dirname(configPath)) <= saved.mtimeMs) {
          builder = ts.readBuilderProgram(options, host);
        }
      }
      const previous = builder;
      builder = ts.createEmitAndSemanticDiagnosticsBuilderProgram(parsed.fileNames, options, host, previous, ts.getConfigFileParsingDiagnostics(parsed));
      // Files checked this build: those the change can affect (all of them on a cold start).
      let checked = 0;
      const diagnostics = [
        ...builder.getConfigFileParsingDiagnostics(),
        ...builder.getOptionsDiagnostics(),
        ...builder.getGlobalDiagnostics(),
        ...builder.getSyntacticDiagnostics(),
      ];
      if (diagnostics.length === 0) {
        for (;;) {
          const next = builder.getSemanticDiagnosticsOfNextAffectedFile();
          if (!next) break;
          checked++;
          diagnostics.push(...next.result);
        }
      }
      const errors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
      if (errors.length > 0) {
        // Nothing is emitted: the last good output stays (the files stay pending for the next good build).
        return { ok: false, output: ts.formatDiagnostics(errors, formatHost), checked, changedJs: 0 };
      }
      mkdirSync(cacheDir, { recursive: true });
      let changedJs = 0;
      const emitted = builder.emit(undefined, (fileName, text, writeByteOrderMark) => {
        const content = writeByteOrderMark ? `\ufeff${text}` : text;
        let before;
        try {
          before = readFileSync(fileName, 'utf8');
        } catch {
          before = undefined;
        }
        // The build info is always written (its state moves on); an output file only when it changed.
        if (before === content && !fileName.endsWith('.tsbuildinfo')) return;
        if (/\.[cm]?js$/.test(fileName)) changedJs++;
        mkdirSync(dirname(fileName), { recursive: true });
        writeFileSync(fileName, content);
      });
      const emitErrors = emitted.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
      if (emitErrors.length > 0) return { ok: false, output: ts.formatDiagnostics(emitErrors, formatHost), checked, changedJs };
      return { ok: true, output: `${relative(cwd, configPath)}: ${checked} file(s) checked, ${changedJs} JavaScript file(s) changed`, checked, changedJs };
    },
  };
}
