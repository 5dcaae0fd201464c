/** The fuzz generators live in scripts/ so that `npm run fuzz` (compiled by tsconfig.build.json) shares them. */
export * from '../../scripts/fuzzGenerators.js';
