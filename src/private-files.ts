/**
 * @module The data folder is private to the account that runs Gatehouse: the SQLite file holds
 * emails, password hashes and the audit trail, and `jwt-secret` signs every session. Folders
 * Gatehouse creates are 0700 and its files 0600, whatever the umask. Modes are set on the file
 * itself (mkdir/open with the mode, then chmod), never with `process.umask()`, which would change
 * every file the host process creates: the library runs inside other people's servers.
 */
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIRECTORY_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * `mkdir -p` where every folder created here is 0700. Folders that already exist keep their
 * mode: the data folder may be the working directory or a folder the operator set up.
 */
export function makePrivateDirectory(directory: string): void {
  const absolute = path.resolve(directory);
  const firstCreated = fs.mkdirSync(absolute, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  if (firstCreated === undefined) return;
  // mkdir's mode is masked by the umask (a umask of 0o277 would leave 0500); chmod is not.
  for (let folder = absolute; ; folder = path.dirname(folder)) {
    fs.chmodSync(folder, PRIVATE_DIRECTORY_MODE);
    if (folder === firstCreated || path.dirname(folder) === folder) break;
  }
}

/**
 * Creates `file` empty with mode 0600 when it does not exist, so that whoever opens it next (the
 * SQLite driver) finds it private. Returns whether it was created. An existing file is left as
 * it is.
 */
export function createPrivateFile(file: string): boolean {
  let descriptor: number;
  try {
    descriptor = fs.openSync(file, 'wx', PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') return false;
    throw error;
  }
  try {
    fs.fchmodSync(descriptor, PRIVATE_FILE_MODE);
  } finally {
    fs.closeSync(descriptor);
  }
  return true;
}

/**
 * Writes `content` to `file` with mode 0600. An existing file is made private before the new
 * content is written into it, so the secret is never readable by others, not even for a moment.
 */
export function writePrivateFile(file: string, content: string): void {
  const descriptor = fs.openSync(file, 'w', PRIVATE_FILE_MODE);
  try {
    fs.fchmodSync(descriptor, PRIVATE_FILE_MODE);
    fs.writeFileSync(descriptor, content);
  } finally {
    fs.closeSync(descriptor);
  }
}

export interface SharedFile {
  file: string;
  /** Permission bits, e.g. 0o644. */
  mode: number;
}

/** The files among `files` that exist and that other users may read or write (any group or other bit). */
export function filesOpenToOthers(files: readonly string[]): SharedFile[] {
  const open: SharedFile[] = [];
  for (const file of files) {
    let mode: number;
    try {
      mode = fs.statSync(file).mode & 0o777;
    } catch {
      continue; // not there (a WAL file exists only while the database is open): nothing to show
    }
    if ((mode & 0o077) !== 0) open.push({ file, mode });
  }
  return open;
}

/** The files SQLite keeps for one database in WAL mode: the file itself, its WAL and its shared memory. */
export function sqliteFiles(filename: string): string[] {
  const file = path.resolve(filename);
  return [file, `${file}-wal`, `${file}-shm`];
}

/** A path as one shell word, for a command the operator can paste. */
export function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `0o644` → `0644`, as `ls -l` users and chmod write it. */
export function octalMode(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}
