import { readApprovalSettings } from './approvals/settings';
import { AuditChain } from './audit';
import { DecisionContext } from './authz/context';
import { loadConfig, type Config } from './config';
import { loadMasterKey } from './crypto/master-key';
import { openString } from './crypto/seal';
import { DirectoryPool, LdapDirectory, type Directory, type DirectoryCredentials } from './directory';
import { poolOptions } from './directory/pool';
import { storeDcHealth } from './directory/shared-health';
import { unavailable } from './errors';
import { logger } from './log';
import { ensureSchema } from './migrations/startup';
import { readSettingsOncePerRequest, type InstanceSettings } from './setup/settings';
import { createStore, type Store } from './store';
import { processEnvironment, type Environment } from './config/environment';

// The composition root of the console: built once per instance, handed to lib/ functions.
export interface ConsoleRuntime {
  config: Config;
  store: Store;
  audit: AuditChain;
  masterKey(): Promise<Buffer>;
  /** Instance settings, read fresh for each request (one consistent read, shared by its steps): a change holds at once for every function. */
  settings(): Promise<InstanceSettings | undefined>;
  /** The directory with the current settings; throws 503 `not_configured` before setup. */
  directory(): Promise<Directory>;
  /** The console's write account (group members, user attributes, account state); never the reset or LAPS account. */
  writeCreds(): Promise<DirectoryCredentials>;
  /** Settings and the directory they configure, from one read of the settings (undefined settings: not configured). */
  settingsAndDirectory(): Promise<{ settings?: InstanceSettings; directory?: Directory }>;
  /**
   * The store holds this code's schema (console spec, Versioning 2): pending migrations run on the
   * first request of an instance after an automatic copy of the data (Database:AutoMigrate), or it
   * answers 503 `migration_pending` until the admin CLI's `migrate` has run them.
   */
  schemaReady(): Promise<void>;
}


export function createRuntime(opts: { env?: Environment; store?: Store } = {}): ConsoleRuntime {
  const env = opts.env ?? processEnvironment();
  const { config, warnings } = loadConfig(env);
  for (const w of warnings) logger.warn(w);
  const store = opts.store ?? createStore();
  let dirCache: { version: number; directory: Directory; stop: () => void } | undefined;

  const masterKey = () => loadMasterKey(env);
  // the chain's state items are signed with a key derived from the master key; rows get lookup items for the viewer
  const audit = new AuditChain(store, 'console', { key: masterKey, lookups: true });

  // one read of the settings per request, shared by the pipeline and the route (fresh per request)
  const readSettings = () => readSettingsOncePerRequest(store);

  async function settings() {
    return (await readSettings())?.settings;
  }

  function directoryOf(rec: { settings: InstanceSettings; version: number }): Directory {
    const { settings: s, version } = rec;
    if (dirCache && dirCache.version === version) return dirCache.directory;
    dirCache?.stop();
    // DC findings shared with every instance through the store (issue 28)
    const pool = new DirectoryPool(s.dcs, poolOptions(config.Directory, s.caPem, { healthProbe: true, sharedHealth: storeDcHealth(store, 'console'), startBudget: config.Concurrency.StartBudget }));
    const readCreds = async () => ({
      user: s.readAccount.user,
      password: openString(await masterKey(), s.readAccount.sealedPassword, 'tech-account:read'),
    });
    const directory = new LdapDirectory(pool, s.baseDn, readCreds);
    const stop = pool.startHealthProbe(readCreds);
    dirCache = { version, directory, stop };
    return directory;
  }

  async function directory(): Promise<Directory> {
    const rec = await readSettings();
    if (!rec) throw unavailable('not_configured');
    return directoryOf(rec);
  }

  async function settingsAndDirectory() {
    const rec = await readSettings();
    return rec ? { settings: rec.settings, directory: directoryOf(rec) } : {};
  }

  async function writeCreds(): Promise<DirectoryCredentials> {
    const s = await settings();
    if (!s) throw unavailable('not_configured');
    return { user: s.writeAccount.user, password: openString(await masterKey(), s.writeAccount.sealedPassword, 'tech-account:write') };
  }

  let schemaChecked: Promise<void> | undefined;
  function schemaReady(): Promise<void> {
    schemaChecked ??= ensureSchema({ config, store, audit }).catch((e) => {
      schemaChecked = undefined; // checked again on the next request (e.g. once `migrate` has run)
      throw e;
    });
    return schemaChecked;
  }

  return { config, store, audit, masterKey, settings, directory, writeCreds, settingsAndDirectory, schemaReady };
}

export type ConsoleDecisionContext = DecisionContext<ConsoleRuntime>;

/** The decision context of one request: the current settings and directory, the approval rules read when a decision needs them. */
export async function decisionContext(rt: ConsoleRuntime): Promise<ConsoleDecisionContext> {
  // one read of the settings for both (fresh: a change holds at once)
  const { settings, directory } = await rt.settingsAndDirectory();
  if (!settings || !directory) throw new Error('not configured');
  return new DecisionContext(rt, directory, settings, () => readApprovalSettings(rt.store).then((r) => r.settings));
}

let singleton: ConsoleRuntime | undefined;
/** The per-instance runtime of a Lambda handler (config validated at cold start: invalid config fails). */
export function runtime(): ConsoleRuntime {
  return (singleton ??= createRuntime());
}
export function resetRuntimeForTests() {
  singleton = undefined;
}
