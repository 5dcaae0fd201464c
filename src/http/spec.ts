import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { specPath } from '../paths.js';

export type SpecDocument = {
  openapi: string;
  info: Record<string, unknown>;
  servers?: unknown[];
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
};

let cached: SpecDocument | null = null;

/** spec/openapi.yaml, parsed once. Treat it as read-only: openapi-backend gets its own copy to dereference. */
export function loadSpec(): SpecDocument {
  cached ??= parse(readFileSync(specPath, 'utf8')) as SpecDocument;
  return cached;
}

export const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** Where the namespace lives; the spec's paths are written in full under it. */
export const REST_ROOT = '/wp-json';
export const NAMESPACE = 'tribe/events/v1';
export const NAMESPACE_PATH = `${REST_ROOT}/${NAMESPACE}`;
