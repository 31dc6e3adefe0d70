/**
 * What the validator is given for a discriminated oneOf (spec: `oneOf` of `$ref`s with a `discriminator`
 * and its `mapping`, e.g. ConnectionCreateRequest keyed by `provider_id`): the same rule written as one
 * `if`/`then` per mapping entry, plus the discriminator's allowed values.
 *
 * Why: express-openapi-validator 5.6 handles a body-level discriminator itself and gets it wrong for
 * variants with nested objects (it merges the `required` lists of nested schemas into the variant's, so
 * a valid body is refused, and its errors lose the `/body` prefix); a plain oneOf reports every
 * variant's failures at once ("must have required property api_key" for a Stripe body). With if/then
 * only the named variant is checked, so a 400 names the bad field of that variant, with its
 * `/body/...` path; an unknown discriminator value is an enum error naming the allowed ones. The
 * `if` keyword's own summary ("must match then schema") is dropped by the error handler.
 */
type Schema = Record<string, unknown>;

export function withConditionalDiscriminators<T extends object>(spec: T): T {
  const schemas = (spec as { components?: { schemas?: Record<string, Schema> } }).components?.schemas ?? {};
  for (const schema of Object.values(schemas)) rewrite(schema);
  return spec;
}

function rewrite(schema: Schema): void {
  const discriminator = schema.discriminator as { propertyName?: string; mapping?: Record<string, string> } | undefined;
  const property = discriminator?.propertyName;
  const mapping = discriminator?.mapping;
  if (!Array.isArray(schema.oneOf) || !property || !mapping) return;
  const values = Object.keys(mapping);
  delete schema.oneOf;
  delete schema.discriminator;
  Object.assign(schema, {
    type: 'object',
    required: [property],
    properties: { [property]: { type: 'string', enum: values } },
    allOf: values.map((value) => ({
      if: { properties: { [property]: { const: value } }, required: [property] },
      then: { $ref: mapping[value] },
    })),
  });
}
