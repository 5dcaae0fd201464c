// A second, independent lint of spec/openapi.yaml beside Redocly's: Spectral's own OpenAPI ruleset, warnings included.
import { oas } from '@stoplight/spectral-rulesets';

const example = oas.rules['oas3-valid-schema-example'];

/** A server variable's default: required by OpenAPI, and an empty one is read as missing by some (kin-openapi). */
const nonEmptyText = (value) => (typeof value === 'string' && value !== '' ? [] : [{ message: 'A server variable needs a default that is not empty: kin-openapi (behind Go\'s oapi-codegen) and other readers refuse the file without one.' }]);

/**
 * Names a generated client's own code uses from its language: a schema of that name becomes a type or constant of the
 * client's module that hides them (typed-openapi's zod client declares `const Error` and then extends `Error`).
 */
const BUILTIN_NAMES = new Set(['Error', 'Promise', 'Response', 'Request', 'Headers', 'Blob', 'File', 'FormData', 'URL', 'URLSearchParams',
  'Date', 'Object', 'Array', 'Map', 'Set', 'Record', 'String', 'Number', 'Boolean', 'Symbol', 'Function', 'JSON', 'Partial', 'Exception']);
const notBuiltin = (schemas) => Object.keys(schemas ?? {}).filter((name) => BUILTIN_NAMES.has(name))
  .map((name) => ({ message: `Schema "${name}" takes the name of a built-in that generated clients use: choose another (WpError, not Error).`, path: ['components', 'schemas', name] }));

export default {
  extends: [oas],
  rules: {
    'server-variable-default': {
      description: 'Every server variable has a default that is not empty.',
      severity: 'error',
      given: ['$.servers[*].variables[*]', '$.paths[*].servers[*].variables[*]', '$.paths[*][*].servers[*].variables[*]'],
      then: { field: 'default', function: nonEmptyText },
    },
    'schema-name-not-builtin': {
      description: 'No schema is named after a built-in of the languages clients are generated in.',
      message: '{{error}}',
      severity: 'error',
      given: '$.components.schemas',
      then: { function: notBuiltin },
    },
    // `x-wp-arg` is not a schema: it copies the keywords the plugin declares for an argument, whose defaults do not
    // always match their own type (`default: null` on a string), so examples are checked everywhere but there.
    'oas3-valid-schema-example': {
      ...example,
      given: example.given.map((path) => path.replace("@property !== 'properties'", "@property !== 'properties' && @property !== 'x-wp-arg'")),
    },
  },
};
