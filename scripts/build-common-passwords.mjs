// Writes the common-password list, folded (NFKC, lower case), deduplicated and sorted, next to
// the compiled module (dist/credentials/common-passwords.txt), where the server reads it on first
// use. Done at build time so that the server never decompresses the package's list itself.
import { writeFileSync } from 'node:fs';
import { LIST_FILE, foldedCommonPasswordList } from '../dist/credentials/common-passwords.js';

writeFileSync(LIST_FILE, foldedCommonPasswordList());
