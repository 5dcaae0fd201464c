import { DateTime } from 'luxon';
import type { Config } from '../config.js';
import { parseZone } from '../domain/dates.js';
import type { Handlers } from '../http/operation.js';
import { describeNamespace, withComputedDefaults } from '../http/routeIndex.js';
import { namespaceDocument, withServer } from '../http/namespaceDocument.js';
import { NAMESPACE, NAMESPACE_PATH, type SpecDocument } from '../http/spec.js';

/** The site index, the namespace index and `/doc`: all derived from spec/openapi.yaml, memoised per base address. */
export function discoveryHandlers(config: Config): Pick<Handlers, 'getRestIndex' | 'getNamespaceIndex' | 'getDocumentation'> {
  const routesByBase = new Map<string, ReturnType<typeof describeNamespace>>();
  const zone = parseZone(config.siteTimezone)!;
  const routesFor = (base: string) => {
    let routes = routesByBase.get(base);
    if (!routes) routesByBase.set(base, (routes = describeNamespace(base)));
    return withComputedDefaults(routes, zone);
  };
  const namespaceDoc = namespaceDocument(); // derived at start-up, so a fault in it shows before the first request
  const docsByBase = new Map<string, SpecDocument>();

  return {
    getRestIndex: (_c, state) => {
      const base = state.site + state.linkPrefix;
      return {
        status: 200,
        body: {
          name: 'Almanac',
          description: 'Events calendar',
          url: base,
          home: base,
          gmt_offset: DateTime.now().setZone(zone).offset / 60,
          timezone_string: zone.type === 'iana' ? zone.name : '',
          namespaces: [NAMESPACE],
          authentication: {},
          routes: routesFor(base),
          _links: { help: [{ href: `${base}/wp-json/${NAMESPACE}/doc` }] },
        },
      };
    },
    getNamespaceIndex: (_c, state) => {
      const base = state.site + state.linkPrefix;
      return { status: 200, body: { namespace: NAMESPACE, routes: routesFor(base), _links: { up: [{ href: `${base}/wp-json/` }] } } };
    },
    getDocumentation: (_c, state) => {
      const base = state.site + state.linkPrefix;
      let doc = docsByBase.get(base);
      if (!doc) docsByBase.set(base, (doc = withServer(namespaceDoc, base + NAMESPACE_PATH)));
      return { status: 200, body: doc as never };
    },
  };
}
