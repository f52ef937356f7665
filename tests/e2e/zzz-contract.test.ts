import { contractSuite } from '../support/contract-suite';

// Runs last (tests/support/sequencer.js): every answer the web apps received from their APIs in
// the browser, and those of the e2e tests' own clients, held against the OpenAPI documents (issue 30).
describe('the API contract', () => contractSuite('e2e'));
