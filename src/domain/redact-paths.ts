/**
 * Takes server paths out of texts that reach tenants and models (source listings, store errors, API
 * answers). Store labels already avoid paths; this catches what other code put in a message: a file
 * system error (`open '/srv/…'`), a git error naming its checkout, a `file://` repository URL, and the
 * user and password of a repository URL (`https://bot:token@host/…`).
 */

/** What a removed path is replaced by. */
export const redactedPath = '<server path>';

// An absolute path begins a token: it follows the start, a space, a quote, a bracket or `=`, never a
// letter, digit, `:` or `/` (so URLs such as https://host/a/b and relative paths such as a/b stay).
const absolutePath = /(?<![\w:/.~-])\/(?:[^\s'"`()[\]{}<>,;]+)/g;
const fileUrl = /\bfile:\/\/[^\s'"`()[\]{}<>,;]*/g;
const urlCredentials = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"`]+@/gi;
// Windows drive paths, for a worker that runs there.
const drivePath = /(?<![\w])[A-Za-z]:\\[^\s'"`()[\]{}<>,;]*/g;

/** The text with every absolute path and `file://` URL replaced by {@link redactedPath}, and URL credentials removed. */
export function redactServerPaths(text: string): string {
  return text.replace(urlCredentials, '$1<credentials>@').replace(fileUrl, `file://${redactedPath}`).replace(absolutePath, redactedPath).replace(drivePath, redactedPath);
}

/** A store id fit for an answer: a local folder's id holds its server path, so its label stands in. */
export function publicStoreId(id: string, description: string): string {
  return id.startsWith('dir:') ? `dir:${redactServerPaths(description)}` : redactServerPaths(id);
}
