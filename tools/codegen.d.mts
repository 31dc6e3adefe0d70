// Types for codegen.mjs (imported by tools/test/codegen.test.ts).
export interface GeneratedFile {
  path: string;
  content: string;
}
export interface GenerateOptions {
  /** The spec's entry file. Default: spec/openapi.yaml. */
  specEntry?: string;
  /** Path the bundled JSON is meant for. Default: packages/types/openapi.json. */
  bundleOut?: string;
  /** Path the TypeScript types are meant for. Default: packages/types/src/generated/openapi.ts. */
  typesOut?: string;
  /** Path the webhook event union is meant for. Default: packages/types/src/generated/webhook-events.ts. */
  eventsOut?: string;
}
export declare function generate(options?: GenerateOptions): Promise<GeneratedFile[]>;
export declare function staleFiles(files: GeneratedFile[]): Promise<GeneratedFile[]>;
/** The TypeScript of the webhook event union of a bundled spec; throws when an event cannot be a member. */
export declare function webhookEvents(doc: unknown): string;
