import { contractSuite } from '../support/contract-suite';

// Runs last (tests/support/sequencer.js): every answer the integration suite received, held
// against the OpenAPI documents (issue 30; tests/support/contract-recorder.ts).
describe('the API contract', () => contractSuite('integration'));
