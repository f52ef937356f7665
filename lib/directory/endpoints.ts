// What names a domain controller and what binds to it: shared by the pool, the probe and the
// shared health (a file of its own so that none of them imports another for a type).

export interface DcEndpoint {
  name: string;
  /** ldaps://host:636 only (validated where settings are saved) */
  url: string;
}
export interface DirectoryCredentials {
  /** a DN or a UPN */
  user: string;
  password: string;
}
