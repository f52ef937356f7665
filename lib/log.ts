import { Logger } from '@aws-lambda-powertools/logger';

// One place for the structured loggers. The audit stream is the logger category `Audit`.
export const logger = new Logger({ serviceName: 'hdc', persistentKeys: { category: 'App' } });
export const auditLogger = new Logger({ serviceName: 'hdc', persistentKeys: { category: 'Audit' } });
