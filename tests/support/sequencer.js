// Integration tests in path order, so zz-secrets.test.ts (the canary search) runs last.
const Sequencer = require('@jest/test-sequencer').default;
class PathOrder extends Sequencer {
  sort(tests) {
    return [...tests].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
}
module.exports = PathOrder;
