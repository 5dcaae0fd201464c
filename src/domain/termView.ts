import type { components } from '../../generated/api.js';
import type { Taxonomy, TermRecord } from '../db/records.js';
import type { Lang, RequestState } from './context.js';
import { escapeTermName } from './text.js';

type Schemas = components['schemas'];
export type TermWire<T extends Taxonomy> = T extends 'category' ? Schemas['Category'] : Schemas['Tag'];

export const TAXONOMY = {
  category: { wireName: 'tribe_events_cat', route: 'categories', listKey: 'categories' },
  tag: { wireName: 'post_tag', route: 'tags', listKey: 'tags' },
} as const;

export interface TermViewContext {
  state: RequestState;
  translations: Map<number, Partial<Record<Lang, number>>>;
  /** Category slug paths from the top ancestor down (`music/jazz`). */
  slugPaths: Map<number, string>;
  /** Methods the caller may use on a term, when `_links` are wanted (single reads, creates, updates). */
  links?: string[];
}

/**
 * A term as the category and tag routes return it (reference resources.md §4.2, DESIGN §5 #11). This and
 * `embeddedTerm` are the only places an answer shows a term's count: each object they build is noted in the request's
 * ReadSet (`shownCounts`), for the response cache (http/cache.ts).
 */
export function termToWire<T extends Taxonomy>(term: TermRecord & { taxonomy: T }, view: TermViewContext): TermWire<T> {
  const { state } = view;
  const tax = TAXONOMY[term.taxonomy];
  const collection = `${state.restBase}/${tax.route}`;
  const self = `${collection}/${term.id}`;
  const site = state.site + state.linkPrefix;
  const url = term.taxonomy === 'category'
    ? `${site}/events/category/${view.slugPaths.get(term.id) ?? term.slug}/`
    : `${site}/tag/${term.slug}/`;
  const urls: Schemas['TermUrls'] = { self, collection };
  if (term.parentId) urls.up = `${collection}/${term.parentId}`;

  const wire: Record<string, unknown> = {
    id: term.id,
    count: term.count,
    description: term.description,
    name: escapeTermName(term.name),
    slug: term.slug,
    taxonomy: tax.wireName,
  };
  if (term.taxonomy === 'category') wire.parent = term.parentId;
  Object.assign(wire, {
    meta: [],
    url,
    urls,
    lang: term.lang,
    translations: view.translations.get(term.translationGroup) ?? { [term.lang]: term.id },
  });
  if (view.links) {
    const links: Schemas['TermLinks'] = {
      self: [{ href: self, targetHints: { allow: view.links as ('GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE')[] } }],
      collection: [{ href: collection }],
    };
    if (term.parentId) links.up = [{ href: `${collection}/${term.parentId}`, embeddable: true }];
    wire._links = links;
  }
  state.reads?.shownCounts.push({ termId: term.id, wire });
  return wire as TermWire<T>;
}

/** A term inside an event's `categories` / `tags` (reference resources.md §4.1): raw WordPress term plus `urls`. */
export function embeddedTerm(term: TermRecord, state: RequestState): Schemas['Term'] {
  const collection = `${state.restBase}/${TAXONOMY[term.taxonomy].route}`;
  const urls: Schemas['TermUrls'] = { self: `${collection}/${term.id}`, collection };
  if (term.parentId) urls.up = `${collection}/${term.parentId}`;
  const wire: Schemas['Term'] = {
    name: escapeTermName(term.name),
    slug: term.slug,
    term_group: 0,
    term_taxonomy_id: term.id,
    taxonomy: TAXONOMY[term.taxonomy].wireName,
    description: term.description,
    parent: term.parentId,
    count: term.count,
    filter: 'raw',
    id: term.id,
    urls,
    lang: term.lang,
  };
  state.reads?.shownCounts.push({ termId: term.id, wire });
  return wire;
}
