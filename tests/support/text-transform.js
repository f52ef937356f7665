'use strict';
// jest: a text file imported as a module is its content (esbuild's `text` loader does the same).
// Read from disk: jest strips a leading `#!` line from the source it hands to transformers.
const fs = require('node:fs');
module.exports = { process: (_src, filename) => ({ code: `module.exports = ${JSON.stringify(fs.readFileSync(filename, 'utf8'))};` }) };
