import { stopStack } from './stack';

// npm run stop: stop a stack left running (by the PIDs it recorded).
void stopStack('dev').then(() => stopStack('test'));
