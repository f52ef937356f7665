'use strict';
// jest: a text file imported as a module is its content (esbuild's `text` loader does the same).
// Read from disk: jest strips a leading `#!` line from the source it hands to transformers; the
// cache key is the file's own bytes (and this transformer's version), so a stale entry never serves.
const crypto = require('node:crypto');
const fs = require('node:fs');
const VERSION = 'text-transform-2';
module.exports = {
  process: (_src, filename) => ({ code: `module.exports = ${JSON.stringify(fs.readFileSync(filename, 'utf8'))};` }),
  getCacheKey: (_src, filename) => crypto.createHash('sha256').update(VERSION).update(filename).update(fs.readFileSync(filename)).digest('hex'),
};
