import { Control } from 'ldapts';

/** LDAP_SERVER_SD_FLAGS_OID with DACL_SECURITY_INFORMATION (4): read the DACL only (readable by the object's readers). */
export class SdFlagsDaclControl extends Control {
  constructor() {
    super('1.2.840.113556.1.4.801', { critical: true });
  }
  protected writeControl(writer: { writeBuffer(b: Buffer, tag: number): void }): void {
    writer.writeBuffer(Buffer.from('3003020104', 'hex'), 4); // SEQUENCE { INTEGER 4 }
  }
}
