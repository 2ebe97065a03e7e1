/**
 * Stands in for the `jsonschema` package in the Lambda bundles (infra/endpoint.ts ALIASES).
 * ElectroDB uses it for one thing: checking a model against ElectroDB's own JSON schema when an
 * entity is made. Our models are constants, and every test run makes each of them with the real
 * package (test/unit/entities.test.ts), so a function need not check them again at every cold
 * start, where the check was the largest part of the first call's own work. Every model passes.
 */
export class Validator {
  addSchema(): void {}

  validate(): { errors: never[] } {
    return { errors: [] };
  }
}

// ElectroDB adds its custom formats to this prototype object when it loads.
Object.assign(Validator.prototype, { customFormats: {} });
