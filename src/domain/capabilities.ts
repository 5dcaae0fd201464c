/** WordPress roles and the plugin's capabilities (reference routes.md §0.5). */

export const ROLES = ['administrator', 'editor', 'author', 'contributor', 'subscriber'] as const;
export type Role = (typeof ROLES)[number];

const POST_TYPES = ['tribe_events', 'tribe_venues', 'tribe_organizers'] as const;

function forPostTypes(...verbs: string[]): string[] {
  return POST_TYPES.flatMap((type) => verbs.map((verb) => `${verb}_${type}`));
}

const contributor = ['read', ...forPostTypes('edit', 'delete')];
const author = [...contributor, ...forPostTypes('edit_published', 'publish', 'delete_published'), 'upload_files'];
const editor = [
  ...author,
  ...forPostTypes('edit_others', 'delete_others', 'edit_private', 'delete_private', 'read_private'),
  'manage_categories',
  'unfiltered_html',
  'moderate_comments',
];
const administrator = [...editor, 'list_users', 'edit_users', 'manage_options'];

const GRANTS: Record<Role, ReadonlySet<string>> = {
  administrator: new Set(administrator),
  editor: new Set(editor),
  author: new Set(author),
  contributor: new Set(contributor),
  subscriber: new Set(['read']),
};

/** What a login may be made of (WordPress's strict user names, less the space), said as the checks say it. */
export const LOGIN_RULE = 'letters, digits, . _ @ - (at most 60)';

export function isLogin(value: string): boolean {
  return /^[A-Za-z0-9._@-]{1,60}$/.test(value);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** Whether a role (or an anonymous caller, `null`) holds every capability listed. */
export function hasCapabilities(role: Role | null, capabilities: readonly string[]): boolean {
  if (capabilities.length === 0) return true;
  if (role === null) return false;
  const granted = GRANTS[role];
  return capabilities.every((cap) => granted.has(cap));
}
