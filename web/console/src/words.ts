// The words live in web/shared/words.ts (the console and the fleet dashboard answer with one table).
export { say, WORDS } from '../../shared/words';
