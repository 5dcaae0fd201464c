import type { ReadSet } from '../db/changes.js';
import type { Role } from './capabilities.js';

/** Who is asking, in which language, and at which addresses: what the middleware learnt about a request. */
export type Lang = 'en' | 'fr' | 'de';
/** The site's languages, in the order WordPress's multilingual plugin lists them. */
export const LANGS: readonly Lang[] = ['en', 'fr', 'de'];
/** The languages with `preferred` first: the order a slug is looked up in. */
export const langsPreferring = (preferred: Lang): Lang[] => [preferred, ...LANGS.filter((l) => l !== preferred)];
export type LangPrefix = '' | '/de' | '/fr';

export interface Caller {
  id: number;
  login: string;
  role: Role;
}

/** What the middleware learnt about a request, handed to every handler. */
export interface RequestState {
  requestId: string;
  /** The authenticated user, or null for an anonymous request. */
  user: Caller | null;
  /** Content language: `xlate_language`, else `wpml_language`, else the path prefix, else `en`. */
  lang: Lang;
  /** `/de` or `/fr` when the request came through that base address. */
  pathPrefix: LangPrefix;
  /** Language prefix for links in the answer (the parameter's language wins, `en` has none). */
  linkPrefix: LangPrefix;
  /** Site URL without trailing slash and without language prefix, e.g. `http://127.0.0.1:8080`. */
  site: string;
  /** `{site}{linkPrefix}/wp-json/tribe/events/v1`. */
  restBase: string;
  /** Names of the query parameters the request carried (defaults are not "sent"), for list links. */
  sent: ReadonlySet<string>;
  /** The `If-Match` header of a write, or null: the write happens only when it names the record's current ETag. */
  ifMatch: string | null;
  /** What the answer reads, recorded when it may be cached (see db/changes.ts); null otherwise. */
  reads: ReadSet | null;
}

export const prefixOf = (lang: Lang): LangPrefix => (lang === 'en' ? '' : `/${lang}`);
