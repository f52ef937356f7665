// The one place in lib/ that reads the process environment (a unit test holds every other module
// to that): everything else receives an `Environment` from its caller or from here, so a test or
// the admin CLI can hand in its own, and the configuration is validated in one loader.
export type Environment = Readonly<Record<string, string | undefined>>;

/** The environment of this process (Lambda, container or local stack). */
export function processEnvironment(): Environment {
  return process.env;
}
