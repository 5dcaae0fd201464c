import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { entityTag } from '../http/conditional.js';
import type { Handlers } from '../http/operation.js';
import { NAMESPACE_PATH } from '../http/spec.js';
import type { RequestState } from '../domain/context.js';

/** A file served as it is, with its type and its entity tag computed once. */
interface Asset {
  text: string;
  headers: Record<string, string>;
}

function asset(text: string, contentType: string): Asset {
  return { text, headers: { 'Content-Type': contentType, ETag: entityTag(text) } };
}

/** Swagger UI's files, from the npm package (no CDN); the source-map comment goes, since the map is not served. */
function swaggerUi(): { css: Asset; script: Asset } {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const read = (file: string) => readFileSync(join(dir, file), 'utf8').replace(/\n?\/[/*]# sourceMappingURL=\S+(?: \*\/)?\s*$/, '\n');
  return {
    css: asset(read('swagger-ui.css'), 'text/css; charset=utf-8'),
    script: asset(read('swagger-ui-bundle.js'), 'application/javascript; charset=utf-8'),
  };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The documentation page: spec/openapi.yaml (as `GET …/doc` serves it for this base address) rendered by Swagger UI.
 * The page, its script and its stylesheet all come from this server; the validator badge, which would call an
 * outside service, is off.
 */
function page(state: RequestState): string {
  const base = escapeHtml(state.site + state.pathPrefix);
  const config = JSON.stringify({
    url: `${state.site}${state.pathPrefix}${NAMESPACE_PATH}/doc`,
    dom_id: '#docs',
    validatorUrl: null,
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
  }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Almanac API</title>
<link rel="stylesheet" href="${base}/docs/swagger-ui.css">
</head>
<body>
<div id="docs"></div>
<script src="${base}/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle(${config});</script>
</body>
</html>
`;
}

export function docsHandlers(): Pick<Handlers, 'getDocsPage' | 'getDocsStylesheet' | 'getDocsScript'> {
  let files: ReturnType<typeof swaggerUi> | null = null;
  const ui = () => (files ??= swaggerUi()); // read on first use: most processes never serve the page
  return {
    getDocsPage: (_c, state) => ({ status: 200, body: page(state), headers: { 'Content-Type': 'text/html; charset=utf-8' } }),
    getDocsStylesheet: () => ({ status: 200, body: ui().css.text, headers: ui().css.headers }),
    getDocsScript: () => ({ status: 200, body: ui().script.text, headers: ui().script.headers }),
  };
}
