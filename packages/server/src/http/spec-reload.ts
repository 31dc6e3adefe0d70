/**
 * The designer's loop (tools/dev.mjs) reloads a spec-only change in the running server instead of
 * restarting it (a restart reopens the embedded database: most of a start). Everything built from the spec
 * per app (routes, validator, body bounds, /openapi.json) is rebuilt by createApp; what modules read from
 * the spec once, when they load, is not: the personal-data declaration (deletion, log redaction) and the
 * Problem schema's caps. A change to either needs a restart, which this says.
 */
import { personalDataOf, type SpecWithSchemas } from '../platform/personal-data.js';
import { forgetLoadedSpec, loadSpec, type OpenApiDocument } from './spec.js';

/** The spec's facts that modules fixed when they loaded, as one comparable string. */
export function factsFixedAtLoad(spec: OpenApiDocument): string {
  const schemas = (spec as SpecWithSchemas).components?.schemas ?? {};
  const personal = personalDataOf(spec as SpecWithSchemas);
  return JSON.stringify({
    personal: Object.keys(schemas)
      .sort()
      .map((name) => [name, personal.fieldsOf(name)]),
    problem: [schemas.Problem, schemas.ProblemFieldError],
  });
}

export type SpecReload = { reloaded: true } | { reloaded: false; reason: string };

/**
 * Reads the spec file again and, when only what createApp builds changed, hands it to `swap` (which builds
 * and installs the new app); otherwise says why a restart is needed. `atStart` is factsFixedAtLoad of the
 * spec the process loaded with.
 */
export async function reloadSpec(atStart: string, swap: () => Promise<void>): Promise<SpecReload> {
  forgetLoadedSpec();
  let spec: OpenApiDocument;
  try {
    spec = loadSpec();
  } catch (err) {
    return { reloaded: false, reason: `the spec could not be read: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (factsFixedAtLoad(spec) !== atStart) return { reloaded: false, reason: 'the personal-data declaration or the Problem schema changed' };
  try {
    await swap();
  } catch (err) {
    return { reloaded: false, reason: err instanceof Error ? err.message : String(err) };
  }
  return { reloaded: true };
}
