/**
 * @module Finds a key repeated within one object of a JSON text. JSON.parse keeps the last of
 * them silently, while another reader of the same body (a proxy, a log, a firewall rule) may keep
 * the first: a body like `{"email":"a@x","email":"b@x"}` means two things at once, so it is
 * refused (http/json-body.ts). Runs on text JSON.parse has already accepted, so it only has to
 * follow the structure, not check it.
 */

/** One open object (its keys so far) or array, and where in it the scan is. */
interface Level {
  keys: Set<string> | null;
  at: string | number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** The path of the first repeated key (`["user", 0, "email"]`), or null when every object's keys differ. */
export function findDuplicateKey(json: string): (string | number)[] | null {
  const levels: Level[] = [];
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const char = json.charCodeAt(i);
    if (char === QUOTE) {
      let end = i + 1;
      let escaped = false;
      while (end < json.length && json.charCodeAt(end) !== QUOTE) {
        if (json.charCodeAt(end) === BACKSLASH) {
          escaped = true;
          end++;
        }
        end++;
      }
      const level = expectKey ? levels[levels.length - 1] : undefined;
      if (level?.keys) {
        // "\u0065mail" is the key "email": escapes are compared as JSON.parse reads them.
        const key = escaped ? (JSON.parse(json.slice(i, end + 1)) as string) : json.slice(i + 1, end);
        level.at = key;
        if (level.keys.has(key)) return levels.map((open) => open.at);
        level.keys.add(key);
      }
      expectKey = false;
      i = end;
    } else if (char === OPEN_OBJECT) {
      levels.push({ keys: new Set(), at: '' });
      expectKey = true;
    } else if (char === OPEN_ARRAY) {
      levels.push({ keys: null, at: 0 });
    } else if (char === CLOSE_OBJECT || char === CLOSE_ARRAY) {
      levels.pop();
      expectKey = false;
    } else if (char === COMMA) {
      const level = levels[levels.length - 1];
      if (level?.keys) expectKey = true;
      else if (level) level.at = (level.at as number) + 1;
    }
  }
  return null;
}
