// A second, independent lint of spec/openapi.yaml beside Redocly's: Spectral's own OpenAPI ruleset, warnings included.
import { oas } from '@stoplight/spectral-rulesets';

const example = oas.rules['oas3-valid-schema-example'];

/** A server variable's default: required by OpenAPI, and an empty one is read as missing by some (kin-openapi). */
const nonEmptyText = (value) => (typeof value === 'string' && value !== '' ? [] : [{ message: 'A server variable needs a default that is not empty: kin-openapi (behind Go\'s oapi-codegen) and other readers refuse the file without one.' }]);

export default {
  extends: [oas],
  rules: {
    'server-variable-default': {
      description: 'Every server variable has a default that is not empty.',
      severity: 'error',
      given: ['$.servers[*].variables[*]', '$.paths[*].servers[*].variables[*]', '$.paths[*][*].servers[*].variables[*]'],
      then: { field: 'default', function: nonEmptyText },
    },
    // `x-wp-arg` is not a schema: it copies the keywords the plugin declares for an argument, whose defaults do not
    // always match their own type (`default: null` on a string), so examples are checked everywhere but there.
    'oas3-valid-schema-example': {
      ...example,
      given: example.given.map((path) => path.replace("@property !== 'properties'", "@property !== 'properties' && @property !== 'x-wp-arg'")),
    },
  },
};
