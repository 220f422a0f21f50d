/**
 * @module The one route whose body may be larger than the API's 16 KiB: the admin user import
 * (NDJSON, at most 10 MiB). app.ts applies this bound to it instead of the usual one.
 */
export const USER_IMPORT_PATH = '/api/admin/users/import';
export const MAX_IMPORT_BODY_BYTES = 10 * 1024 * 1024;
