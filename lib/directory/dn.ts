// Distinguished-name containment, shared by the directory port (lib/directory/index.ts) and the
// authorization rules (lib/authz): a plain `endsWith` on DNs is not containment.

/**
 * Is `dn` strictly below `ouDn`? The separating comma must be a real one: in
 * `CN=x\,OU=Managed,DC=corp` the text ends with `,OU=Managed,DC=corp` but the object sits at the
 * root, its name "x,OU=Managed" (an escaped comma is preceded by an odd number of backslashes).
 */
/** Is `dn` the OU itself or below it? */
export const isAtOrBelow = (dn: string, ouDn: string): boolean => dn.toLowerCase() === ouDn.toLowerCase() || isBelow(dn, ouDn);

export function isBelow(dn: string, ouDn: string): boolean {
  const d = dn.toLowerCase();
  const suffix = `,${ouDn.toLowerCase()}`;
  if (!ouDn || !d.endsWith(suffix)) return false;
  let slashes = 0;
  for (let i = d.length - suffix.length - 1; i >= 0 && d[i] === '\\'; i--) slashes++;
  return slashes % 2 === 0;
}
