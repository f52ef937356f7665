import { currentClassification, type ClassificationContext } from '../../authz/classify';
import type { Config } from '../../config';
import { sha256Hex } from '../../crypto/seal';
import { DirectoryPool, LdapDirectory, type Directory, type DirectoryCredentials } from '../../directory';
import { poolOptions } from '../../directory/pool';
import { storeDcHealth } from '../../directory/shared-health';
import { loadSecret } from '../../secrets';
import { protectedGroupSidsOf, readSettings, type InstanceSettings } from '../../setup/settings';
import type { Store } from '../../store';
import { getRecord } from '../../store/records';

// What every operation of the password service stands on: the directory settings (re-read at most
// every 3 s), the pin, its technical accounts, and a directory bound to one of them.

export const PIN_KEY = { pk: 'PWDSVC', sk: 'PIN' };
export interface Pin {
  domain: string;
  caSha256: string;
  pinnedAt: string;
}

export class ServiceContext {
  private settingsCache?: { at: number; value?: InstanceSettings };
  private dirs = new Map<string, Directory>();

  constructor(
    readonly store: Store,
    readonly config: Config,
    readonly env: NodeJS.ProcessEnv,
    readonly linkKey: () => Promise<Buffer>,
    /** where the console's directory settings are read: the console's file, read only, on the embedded store; the shared table on DynamoDB */
    readonly settingsStore: Store = store,
  ) {}

  /** Directory settings (console spec: the password service follows a change within 3 seconds). */
  async settings(): Promise<InstanceSettings | undefined> {
    if (this.settingsCache && Date.now() - this.settingsCache.at < 3000) return this.settingsCache.value;
    const rec = await readSettings(this.settingsStore);
    this.settingsCache = { at: Date.now(), value: rec?.settings };
    return rec?.settings;
  }

  private pinKept?: Pin;

  /** The pin record, read fresh (a deleted or changed pin holds at once). */
  async pin(): Promise<Pin | undefined> {
    const pin = (await getRecord<Pin>(this.store, PIN_KEY.pk, PIN_KEY.sk))?.data;
    this.pinKept = pin;
    return pin;
  }

  /**
   * The pin as last read, for a LAPS operation: it may be stale, so the operation's admission
   * writes only if the stored pin still says the same (`pinUnchanged`, in the same transaction):
   * a changed or deleted pin refuses it before anything read leaves, and the pin is read again.
   */
  async pinKeptOrRead(): Promise<Pin | undefined> {
    return this.pinKept ?? (await this.pin());
  }

  forgetPin(): void {
    this.pinKept = undefined;
  }

  /** The condition, checked inside a transaction, that the stored pin is still `pin`. */
  pinUnchanged(pin: Pin) {
    return {
      ConditionCheck: {
        TableName: this.store.tableName,
        Key: { pk: PIN_KEY.pk, sk: PIN_KEY.sk },
        ConditionExpression: '#d.#domain = :domain AND #d.#ca = :ca',
        ExpressionAttributeNames: { '#d': 'data', '#domain': 'domain', '#ca': 'caSha256' },
        ExpressionAttributeValues: { ':domain': pin.domain, ':ca': pin.caSha256 },
      },
    };
  }

  /** Pinned to this domain and this CA (and to HDC_PWD_DOMAIN when set)? */
  trustedBy(s: InstanceSettings, pin: Pin | undefined): boolean {
    if (!pin) return false;
    if (this.env.HDC_PWD_DOMAIN && this.env.HDC_PWD_DOMAIN.toLowerCase() !== pin.domain) return false;
    return pin.domain === s.domain && pin.caSha256 === sha256Hex(s.caPem);
  }

  async trusted(s: InstanceSettings): Promise<boolean> {
    return this.trustedBy(s, await this.pin());
  }

  /** A technical account of the service: its UPN and its password from a file (local, container) or Secrets Manager (AWS). */
  async credentials(account: 'laps' | 'reset' | 'bitlocker'): Promise<DirectoryCredentials | undefined> {
    const ps = this.config.PasswordService;
    const { upn, file, secretId } = {
      laps: { upn: ps.LapsIdentity.Upn, file: ps.LapsIdentity.PasswordFile, secretId: this.env.HDC_LAPS_PASSWORD_SECRET_ID },
      reset: { upn: this.env.HDC_RESET_UPN, file: this.env.HDC_RESET_PASSWORD_FILE, secretId: this.env.HDC_RESET_PASSWORD_SECRET_ID },
      // the BitLocker account (issue 33): its own UPN and secret, never the LAPS account's
      bitlocker: { upn: ps.BitlockerIdentity.Upn, file: ps.BitlockerIdentity.PasswordFile, secretId: this.env.HDC_BITLOCKER_PASSWORD_SECRET_ID },
    }[account];
    const password = await loadSecret({ file, secretId }, { preferFile: true });
    return upn && password ? { user: upn, password } : undefined;
  }

  directory(s: InstanceSettings, creds: DirectoryCredentials): Directory {
    const key = sha256Hex(JSON.stringify([s.dcs, s.caPem, creds.user]));
    let dir = this.dirs.get(key);
    if (!dir) {
      // the service's instances share their DC findings through its own store (issue 28)
      const opts = poolOptions(this.config.Directory, s.caPem, { sharedHealth: storeDcHealth(this.store, 'password-service'), startBudget: this.config.Concurrency.StartBudget });
      dir = new LdapDirectory(new DirectoryPool(s.dcs, opts), s.baseDn, async () => creds);
      this.dirs.set(key, dir);
    }
    return dir;
  }

  /** Managed and Tier OUs at their current DN (read by GUID) and the protected groups: the classification input. */
  classificationContext(dir: Directory, s: InstanceSettings): Promise<ClassificationContext> {
    return currentClassification(s, protectedGroupSidsOf(s), (o) => dir.dnOfGuid(o.guid));
  }
}
