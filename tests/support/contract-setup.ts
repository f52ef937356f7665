import { ConsoleClient } from '../../local/console-client';
import { recordAnswer } from './contract-recorder';

// Jest setup of the integration and e2e projects (jest.config.js): every answer a console client
// receives goes to the contract record (tests/support/contract-recorder.ts). The fleet tests'
// `call` and the browser contexts record their own.
ConsoleClient.observer = (answer) => recordAnswer('console', answer);
