// Three projects: unit (no outside system), integration (real Samba AD, DynamoDB Local,
// serverless-offline) and e2e (the web app in Debian's Chromium against the same stack).
const common = {
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest'], '^.+\\.sh$': '<rootDir>/tests/support/text-transform.js' },
  transformIgnorePatterns: ['/node_modules/(?!(@middy|jose|ldapts|otpauth)/)'],
  moduleNameMapper: {
    '^@middy/([^/]+)$': '<rootDir>/node_modules/@middy/$1/index.js',
    '^@lib/(.*)$': '<rootDir>/lib/$1',
  },
  testEnvironment: 'node',
};
module.exports = {
  testSequencer: '<rootDir>/tests/support/sequencer.js',
  testTimeout: 120000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/tests/unit/**/*.test.ts'] },
    // every answer the integration and e2e suites receive is held against the OpenAPI documents (issue 30)
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/tests/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/tests/integration/global-setup.ts', setupFiles: ['<rootDir>/tests/support/contract-setup.ts'] },
    // the images on the local directory (podman): after the e2e tests, the directory still running
    { ...common, displayName: 'containers', testMatch: ['<rootDir>/tests/containers/**/*.test.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/tests/e2e/**/*.test.ts'],
      globalSetup: '<rootDir>/tests/integration/global-setup.ts', setupFiles: ['<rootDir>/tests/support/contract-setup.ts'] },
  ],
};
