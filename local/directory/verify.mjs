// verify.mjs : assertions against the running local test directory (both DCs), over LDAPS with
// ldapts, the CA from seed.json and host names verified against the certificates' IP SANs.
// Prints 'N passed, M failed'; exits non-zero on a failure.
//   node local/directory/verify.mjs              everything below (DCs must be running)
//   node local/directory/verify.mjs --failover   also: dc.sh stop dc1, dc2 still answers, dc.sh start dc1
// Writes it makes are put back (descriptions, one password reset to the same password, expiry times).
import { Attribute, Change, Client } from 'ldapts';
import { execFileSync } from 'node:child_process';
import dns from 'node:dns/promises';
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { HERE, PROBE_DN, SEED_FILE, checkReplication, errorOf, sidToString, value, values } from './common.mjs';

const seed = JSON.parse(fs.readFileSync(SEED_FILE, 'utf8'));
const ca = fs.readFileSync(seed.caFile);
let passed = 0, failed = 0, notes = 0;
const ok = (cond, msg, extra = '') => {
  if (cond) { passed++; console.log(`ok    ${msg}`); } else { failed++; console.log(`FAIL  ${msg}${extra ? ` -- ${typeof extra === 'string' ? extra : JSON.stringify(extra)}` : ''}`); }
};
// where Samba is known to differ from Windows AD: printed, not counted
const note = (msg) => { notes++; console.log(`NOTE  ${msg}`); };

const open = (url) => new Client({ url, timeout: 10000, connectTimeout: 5000, tlsOptions: { ca: [ca] } });
async function bind(url, upn, password) {
  const c = open(url);
  try { await c.bind(upn, password); } catch (err) { await c.unbind().catch(() => {}); throw err; }
  return c;
}
const base = (c, dn, attributes, opts = {}) => c.search(dn, { scope: 'base', attributes, ...opts }).then((r) => r.searchEntries[0]);
const replace = (type, vals) => new Change({ operation: 'replace', modification: new Attribute({ type, values: Array.isArray(vals) ? vals : [vals] }) });
const computer = (name) => seed.computers.find((x) => x.name === name);
const user = (name) => seed.users.find((x) => x.username === name);
const group = (name) => seed.groups.find((x) => x.name === name);
const T = seed.technicalAccounts;
const admin = seed.admin;
const PASSWORD_ATTRS = ['msLAPS-Password', 'ms-Mcs-AdmPwd', 'msLAPS-EncryptedPassword'];
const has = (e, a) => values(e ?? {}, a).length > 0;
const inside = (dn, ous) => ous.some((o) => dn.toLowerCase().endsWith(`,${o.toLowerCase()}`));

// --- TLS: the DCs' certificates chain to the test CA and name their IP address
for (const dc of seed.dcs) {
  const err = await new Promise((resolve) => {
    const s = tls.connect({ host: dc.host, port: 636, ca: [ca] }, () => { s.end(); resolve(null); });
    s.on('error', resolve);
  });
  ok(!err, `${dc.name}: TLS to ${dc.host}:636 verifies with the test CA and the IP SAN (no servername override)`, err?.message);
  const noCa = await new Promise((resolve) => {
    const s = tls.connect({ host: dc.host, port: 636 }, () => { s.end(); resolve(null); });
    s.on('error', resolve);
  });
  ok(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'SELF_SIGNED_CERT_IN_CHAIN'].includes(noCa?.code),
    `${dc.name}: without the test CA the certificate is refused`, noCa?.message ?? 'accepted');
}

// --- DC discovery: the DCs' DNS answers the SRV record on both addresses, and nothing else
for (const server of seed.discovery.dnsServers) {
  const r = new dns.Resolver({ timeout: 2000, tries: 1 });
  r.setServers([server]);
  const srv = await r.resolveSrv(seed.discovery.srv).catch((err) => err);
  const names = Array.isArray(srv) ? srv.map((x) => x.name).sort() : [];
  ok(JSON.stringify(names) === JSON.stringify(seed.dcs.map((d) => `${d.name}.${seed.domain}`)), `DNS ${server}: ${seed.discovery.srv} names both DCs`, srv?.message ?? names);
  const a = await r.resolve4(`dc2.${seed.domain}`).catch((err) => err);
  ok(Array.isArray(a) && a[0] === '127.0.0.2', `DNS ${server}: dc2.${seed.domain} -> 127.0.0.2`, a?.message ?? a);
  const out = await r.resolve4('example.com').catch((err) => err);
  ok(!Array.isArray(out), `DNS ${server}: names outside the domain are not resolved (no forwarder)`, out);
}

// --- binds
const accounts = [...Object.values(T), ...seed.users.filter((u) => u.kind === 'operator')];
for (const dc of seed.dcs) {
  const results = await Promise.all(accounts.map((a) => errorOf(bind(dc.url, a.upn, a.password).then((c) => c.unbind()))));
  const bad = accounts.filter((a, i) => results[i]).map((a, i) => `${a.username}: ${results[i]?.message}`);
  ok(bad.length === 0, `${dc.name}: LDAPS simple bind of ${accounts.length} technical accounts and operators`, bad.join('; '));
  const dnBind = await errorOf(bind(dc.url, T.read.dn, T.read.password).then((c) => c.unbind()));
  ok(!dnBind, `${dc.name}: bind by DN works too`, dnBind?.message);
  const wrong = await errorOf(bind(dc.url, T.read.upn, 'wrong'));
  ok(wrong?.code === 49, `${dc.name}: wrong password -> invalidCredentials (49)`, wrong?.message);
  const carol = await errorOf(bind(dc.url, user('carol').upn, user('carol').password));
  ok(carol?.code === 49 && /data 533/.test(carol.message), `${dc.name}: disabled carol cannot bind (49, data 533)`, carol?.message);
  const dave = await errorOf(bind(dc.url, user('dave').upn, user('dave').password));
  ok(dave?.code === 49 && /data 775/.test(dave.message), `${dc.name}: locked-out dave cannot bind (49, data 775)`, dave?.message);
  const plain = new Client({ url: `ldap://${dc.host}:389`, timeout: 10000 });
  const refused = await errorOf(plain.bind(T.read.upn, T.read.password));
  ok(refused?.code === 8, `${dc.name}: plain ldap:// simple bind refused (strongAuthRequired 8)`, refused?.message ?? 'bind succeeded');
  await plain.unbind().catch(() => {});
}

// --- seed.json matches the directory
{
  const c = await bind(seed.dcs[1].url, admin.upn, admin.password);
  const all = [...seed.users, ...Object.values(T), ...seed.groups, ...seed.computers, ...seed.ous];
  const wrong = [];
  for (const o of all) {
    const e = o.guid && (await c.search(`<GUID=${o.guid}>`, { scope: 'base', attributes: ['objectGUID'] }).then((r) => r.searchEntries[0], () => null));
    if (!e || e.dn.toLowerCase() !== o.dn.toLowerCase()) wrong.push(o.username ?? o.name ?? o.dn);
  }
  ok(wrong.length === 0, `seed.json: all ${all.length} GUIDs resolve to their DNs (<GUID=...> on dc2)`, wrong);
  const classes = new Set(seed.computers.map((x) => x.class));
  const want = ['standard', 'vip', 'dc', 'rodc', 'unconstrained_delegation', 'protocol_transition', 'sensitive_group_direct', 'sensitive_group_nested', 'sensitive_group_primary', 'admin_count', 'tier0_ou', 'unmanaged'];
  ok(want.every((k) => classes.has(k)), 'seed.json: a computer of every class', want.filter((k) => !classes.has(k)));
  await c.unbind();
}

// --- class signals, read as the read account (what the console sees)
{
  const c = await bind(seed.dcs[0].url, T.read.upn, T.read.password);
  const read = (name, attrs) => base(c, computer(name).dn, attrs);
  const uac = async (name) => Number(value(await read(name, ['userAccountControl']), 'userAccountControl'));
  const pgid = async (name) => Number(value(await read(name, ['primaryGroupID']), 'primaryGroupID'));
  for (const dcName of ['DC1', 'DC2']) {
    ok((await uac(dcName)) & 0x2000 && (await pgid(dcName)) === 516, `${dcName}: SERVER_TRUST_ACCOUNT, primaryGroupID 516`);
  }
  ok((await uac('SRV-DCLIKE-01')) & 0x2000 && (await pgid('SRV-DCLIKE-01')) === 516, 'SRV-DCLIKE-01: SERVER_TRUST_ACCOUNT (0x2000), primaryGroupID 516');
  ok((await uac('SRV-RODC-01')) & 0x4000000 && (await pgid('SRV-RODC-01')) === 521, 'SRV-RODC-01: PARTIAL_SECRETS_ACCOUNT (0x4000000), primaryGroupID 521');
  ok((await uac('SRV-UNCON-01')) & 0x80000, 'SRV-UNCON-01: TRUSTED_FOR_DELEGATION (0x80000)');
  ok((await uac('SRV-PT-01')) & 0x1000000, 'SRV-PT-01: TRUSTED_TO_AUTH_FOR_DELEGATION (0x1000000)');
  ok(value(await read('WS-ADMINCOUNT', ['adminCount']), 'adminCount') === '1', 'WS-ADMINCOUNT: adminCount=1');
  ok(value(await base(c, user('admin-adam').dn, ['adminCount']), 'adminCount') === '1', 'admin-adam: adminCount=1');
  ok(inside(computer('SRV-T0-01').dn, seed.tier0Ous), 'SRV-T0-01 is below a Tier 0 OU');
  ok(!inside(computer('WS-OTHER-01').dn, seed.managedOus), 'WS-OTHER-01 is outside the managed OUs');
  ok(values(await read('WS-VIP-01', ['memberOf']), 'memberOf').includes(group('GG-VIP').dn), 'WS-VIP-01: member of the protected group GG-VIP');
  const standard = seed.computers.filter((x) => x.class === 'standard');
  const flags = await Promise.all(standard.map((x) => uac(x.name)));
  ok(flags.every((f) => f === 0x1000), 'standard computers: UAC exactly WORKSTATION_TRUST_ACCOUNT (enabled)', flags);

  // tokenGroups (scope base, constructed): direct, nested and primary memberships all show
  const sens = Object.fromEntries(seed.sensitiveGroups.map((g) => [g.name, g.sid]));
  const tokenGroups = async (name) => values(await read(name, ['tokenGroups']).then((e) => e, () => ({})), 'tokenGroups').map(sidToString);
  const tg = {};
  for (const n of ['WS-SENS-DIRECT', 'WS-SENS-NESTED', 'WS-SENS-PRIMARY', 'WS-STD-04']) tg[n] = await tokenGroups(n);
  ok(tg['WS-SENS-DIRECT'].includes(sens['Server Operators']), 'WS-SENS-DIRECT: tokenGroups holds Server Operators (direct)', tg['WS-SENS-DIRECT']);
  ok(tg['WS-SENS-NESTED'].includes(sens['Server Operators']) && tg['WS-SENS-NESTED'].includes(group('GG-Nested-Sensitive').sid),
    'WS-SENS-NESTED: tokenGroups holds GG-Nested-Sensitive and Server Operators (nested)', tg['WS-SENS-NESTED']);
  ok(tg['WS-SENS-PRIMARY'].includes(sens['Domain Admins']) && (await pgid('WS-SENS-PRIMARY')) === 512,
    'WS-SENS-PRIMARY: primaryGroupID 512 and tokenGroups holds Domain Admins (primary)', tg['WS-SENS-PRIMARY']);
  const daMembers = values(await base(c, seed.sensitiveGroups.find((g) => g.name === 'Domain Admins').dn, ['member']), 'member');
  ok(!daMembers.includes(computer('WS-SENS-PRIMARY').dn), 'WS-SENS-PRIMARY: in no member attribute of Domain Admins (primary group only)');
  ok(!Object.values(sens).some((s) => tg['WS-STD-04'].includes(s)), 'WS-STD-04: tokenGroups holds no sensitive group (control)', tg['WS-STD-04']);
  const chain = (await c.search(seed.baseDn, { filter: `(&(objectCategory=computer)(memberOf:1.2.840.113556.1.4.1941:=${seed.sensitiveGroups.find((g) => g.name === 'Server Operators').dn}))`, attributes: ['cn'] })).searchEntries.map((e) => value(e, 'cn')).sort();
  ok(JSON.stringify(chain) === '["WS-SENS-DIRECT","WS-SENS-NESTED"]', 'memberOf:1.2.840.113556.1.4.1941 (in chain) of Server Operators = WS-SENS-DIRECT, WS-SENS-NESTED', chain);
  const hd = (await c.search(seed.baseDn, { filter: `(&(objectCategory=person)(memberOf:1.2.840.113556.1.4.1941:=${group('GG-Helpdesk').dn}))`, attributes: ['sAMAccountName'] })).searchEntries.map((e) => value(e, 'sAMAccountName'));
  ok(hd.includes('op-helpdesk'), 'op-helpdesk is a nested member of GG-Helpdesk', hd);

  // users
  ok(Number(value(await base(c, user('carol').dn, ['userAccountControl']), 'userAccountControl')) & 2, 'carol: ACCOUNTDISABLE');
  const dave = await base(c, user('dave').dn, ['lockoutTime', 'msDS-User-Account-Control-Computed']);
  ok(BigInt(value(dave, 'lockoutTime') ?? 0) > 0n && Number(value(dave, 'msDS-User-Account-Control-Computed')) & 0x10, 'dave: lockoutTime > 0 and UF_LOCKOUT computed', dave);
  ok(values(await base(c, user('da-dana').dn, ['memberOf']), 'memberOf').some((d) => d.startsWith('CN=Domain Admins,')), 'da-dana: member of Domain Admins');
  ok(values(await base(c, user('vip-victor').dn, ['memberOf']), 'memberOf').includes(group('GG-VIP').dn), 'vip-victor: member of GG-VIP');

  // the read account sees no LAPS password anywhere (confidential attributes)
  const all = (await c.search(seed.baseDn, { filter: '(objectCategory=computer)', attributes: ['cn', ...PASSWORD_ATTRS, 'msLAPS-PasswordExpirationTime'] })).searchEntries;
  const leaks = all.filter((e) => PASSWORD_ATTRS.some((a) => has(e, a))).map((e) => value(e, 'cn'));
  ok(all.length >= seed.computers.length && leaks.length === 0, `svc-hdc-read reads no LAPS password on any of ${all.length} computers`, leaks);
  const byFilter = (await c.search(seed.baseDn, { filter: '(|(msLAPS-Password=*)(ms-Mcs-AdmPwd=*)(msLAPS-EncryptedPassword=*))', attributes: ['cn'] })).searchEntries;
  ok(byFilter.length === 0, 'svc-hdc-read: a filter on the LAPS password attributes matches nothing', byFilter.map((e) => value(e, 'cn')));
  ok(all.some((e) => has(e, 'msLAPS-PasswordExpirationTime')), 'svc-hdc-read reads the (non-confidential) expiration times');
  await c.unbind();
}

// --- LAPS account, on both DCs
for (const dc of seed.dcs) {
  const c = await bind(dc.url, T.laps.upn, T.laps.password);
  const laps = async (name) => base(c, computer(name).dn, [...PASSWORD_ATTRS, 'msLAPS-PasswordExpirationTime', 'ms-Mcs-AdmPwdExpirationTime']);
  const win = (e) => { try { return JSON.parse(value(e, 'msLAPS-Password')); } catch { return null; } };
  const s1 = await laps('WS-STD-01');
  ok(win(s1)?.p === computer('WS-STD-01').lapsPassword && win(s1)?.n === 'Administrator' && /^[0-9a-f]+$/.test(win(s1)?.t),
    `${dc.name}: svc-laps reads msLAPS-Password of WS-STD-01 (JSON n/t/p, non-ASCII and JSON-special characters intact)`, value(s1, 'msLAPS-Password'));
  const s2 = await laps('WS-STD-02');
  ok(value(s2, 'ms-Mcs-AdmPwd') === computer('WS-STD-02').lapsLegacyPassword && !has(s2, 'msLAPS-Password'), `${dc.name}: svc-laps reads ms-Mcs-AdmPwd of WS-STD-02 (legacy only)`);
  const s3 = await laps('WS-STD-03');
  ok(!has(s3, 'msLAPS-EncryptedPassword') && !has(s3, 'msLAPS-Password') && has(s3, 'msLAPS-PasswordExpirationTime'), `${dc.name}: svc-laps gets no msLAPS-EncryptedPassword on WS-STD-03 (expiration time only)`);
  const s4 = await laps('WS-STD-04');
  ok(PASSWORD_ATTRS.every((a) => !has(s4, a)), `${dc.name}: WS-STD-04 has no LAPS value`);
  const s5 = await laps('WS-STD-05');
  ok(win(s5)?.p === computer('WS-STD-05').lapsPassword && value(s5, 'ms-Mcs-AdmPwd') === computer('WS-STD-05').lapsLegacyPassword, `${dc.name}: WS-STD-05 shows both Windows and legacy LAPS`);
  ok(win(await laps('WS-BR-01'))?.p === computer('WS-BR-01').lapsPassword, `${dc.name}: svc-laps reads msLAPS-Password in OU=Branch (WS-BR-01)`);
  const nr = await laps('SRV-NORIGHTS-01');
  ok(!has(nr, 'msLAPS-Password') && !has(nr, 'ms-Mcs-AdmPwd'), `${dc.name}: svc-laps gets no password on SRV-NORIGHTS-01 (Read Property without Control Access)`, nr);
  const other = await laps('WS-OTHER-01');
  ok(PASSWORD_ATTRS.every((a) => !has(other, a)), `${dc.name}: svc-laps gets no password on WS-OTHER-01 (OU=Unmanaged, no grant)`);
  const neverManageable = seed.computers.filter((x) => !['standard', 'unmanaged'].includes(x.class) && x.laps === 'windows' && inside(x.dn, seed.managedOus));
  const visible = await Promise.all(neverManageable.map(async (x) => win(await laps(x.name))?.p === x.lapsPassword));
  ok(visible.every(Boolean), `${dc.name}: the directory shows svc-laps the canaries of ${neverManageable.length} never-manageable/VIP computers in managed OUs (only the console can refuse them)`);
  const found = (await c.search(seed.baseDn, { filter: '(&(objectCategory=computer)(msLAPS-Password=*))', attributes: ['cn'] })).searchEntries.map((e) => value(e, 'cn'));
  ok(!found.includes('SRV-NORIGHTS-01') && !found.includes('WS-OTHER-01') && found.includes('WS-STD-01'), `${dc.name}: filter (msLAPS-Password=*) as svc-laps matches only where readable`, found);
  await c.unbind();
}

// --- BitLocker recovery entries (issue 33), on both DCs: only svc-bitlocker reads msFVE-RecoveryPassword
if (T.bitlocker) {
  const entries = seed.computers.flatMap((x) => (x.bitlocker ?? []).map((k) => ({ ...k, computer: x.name })));
  const managed = entries.filter((k) => ['WS-STD-01', 'WS-STD-05', 'WS-BR-01', 'WS-VIP-01'].includes(k.computer));
  for (const dc of seed.dcs) {
    for (const who of ['read', 'write', 'reset', 'laps']) {
      const c = await bind(dc.url, T[who].upn, T[who].password);
      const seen = await Promise.all(managed.map((k) => base(c, k.dn, ['cn', 'msFVE-RecoveryPassword']).catch(() => undefined)));
      ok(seen.every((e) => !has(e, 'msFVE-RecoveryPassword')), `${dc.name}: ${T[who].username} reads no msFVE-RecoveryPassword (confidential)`);
      if (who === 'read') ok(seen.every((e) => has(e, 'cn')), `${dc.name}: svc-hdc-read lists the recovery entries of managed computers (key id, volume, date)`);
      await c.unbind();
    }
    const c = await bind(dc.url, T.bitlocker.upn, T.bitlocker.password);
    const read = await Promise.all(entries.map((k) => base(c, k.dn, ['msFVE-RecoveryPassword']).catch(() => undefined)));
    const readable = entries.filter((_, i) => value(read[i] ?? {}, 'msFVE-RecoveryPassword') === entries[i].password).map((k) => k.computer);
    ok(managed.every((k) => readable.includes(k.computer)), `${dc.name}: svc-bitlocker reads the recovery password of every entry in OU=Managed and OU=Branch`, readable);
    ok(!readable.includes('SRV-NORIGHTS-01') && !readable.includes('WS-OTHER-01'), `${dc.name}: svc-bitlocker reads none in OU=NoLapsRights or outside the managed OUs`, readable);
    await c.unbind();
  }
}

// --- writes of the LAPS, write and reset accounts (each put back)
{
  const dc = seed.dcs[0];
  const a = await bind(dc.url, admin.upn, admin.password);
  const l = await bind(dc.url, T.laps.upn, T.laps.password);
  const ws1 = computer('WS-STD-01').dn;
  const before = await base(a, ws1, ['msLAPS-PasswordExpirationTime', 'ms-Mcs-AdmPwdExpirationTime', 'msLAPS-Password']);
  const exp = value(before, 'msLAPS-PasswordExpirationTime');
  ok(!(await errorOf(l.modify(ws1, replace('msLAPS-PasswordExpirationTime', exp)))), 'svc-laps writes msLAPS-PasswordExpirationTime on WS-STD-01 (WP)');
  const e2 = computer('WS-STD-02').dn;
  const exp2 = value(await base(a, e2, ['ms-Mcs-AdmPwdExpirationTime']), 'ms-Mcs-AdmPwdExpirationTime');
  ok(!(await errorOf(l.modify(e2, replace('ms-Mcs-AdmPwdExpirationTime', exp2)))), 'svc-laps writes ms-Mcs-AdmPwdExpirationTime on WS-STD-02 (WP)');
  const denied = await errorOf(l.modify(computer('WS-OTHER-01').dn, replace('msLAPS-PasswordExpirationTime', exp)));
  ok(denied?.code === 50, 'svc-laps cannot write the expiration time on WS-OTHER-01 (50)', denied?.message);
  const denied2 = await errorOf(l.modify(computer('SRV-NORIGHTS-01').dn, replace('msLAPS-PasswordExpirationTime', exp)));
  ok(denied2?.code === 50, 'svc-laps cannot write the expiration time on SRV-NORIGHTS-01 (50)', denied2?.message);
  const desc = await errorOf(l.modify(ws1, replace('description', 'x')));
  ok(desc?.code === 50, 'svc-laps cannot write description on WS-STD-01 (50)', desc?.message);
  const crWrite = await errorOf(l.modify(ws1, replace('msLAPS-Password', value(before, 'msLAPS-Password'))));
  if (!crWrite) note('svc-laps (RP+CR, no WP) could write msLAPS-Password on WS-STD-01: Samba lets Control Access write an attribute; Windows AD would refuse (same value written back)');
  else ok(crWrite.code === 50, 'svc-laps cannot write msLAPS-Password (no WP)', crWrite.message);
  await l.unbind();

  const w = await bind(dc.url, T.write.upn, T.write.password);
  const alice = user('alice').dn;
  const aliceDesc = value(await base(a, alice, ['description']), 'description');
  ok(!(await errorOf(w.modify(alice, replace('description', 'verify.mjs was here')))), 'svc-hdc-write writes description of alice (OU=Managed)');
  // put back as found (another run may have left alice without a description)
  await a.modify(alice, aliceDesc === undefined ? new Change({ operation: 'delete', modification: new Attribute({ type: 'description', values: [] }) }) : replace('description', aliceDesc));
  const bea = user('branch-bea').dn;
  ok(!(await errorOf(w.modify(bea, replace('telephoneNumber', '+1 555 0100')))), 'svc-hdc-write writes telephoneNumber of branch-bea (OU=Branch)');
  await a.modify(bea, new Change({ operation: 'delete', modification: new Attribute({ type: 'telephoneNumber', values: [] }) }));
  const sales = group('GG-Sales').dn;
  const addM = await errorOf(w.modify(sales, new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [alice] }) })));
  ok(!addM, 'svc-hdc-write adds a member to GG-Sales', addM?.message);
  if (!addM) await w.modify(sales, new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [alice] }) }));
  const staff = await errorOf(w.modify(user('op-norole').dn, replace('description', 'x')));
  ok(staff?.code === 50, 'svc-hdc-write cannot write users in OU=Staff (50)', staff?.message);
  const wsDesc = await errorOf(w.modify(computer('WS-STD-04').dn, replace('description', 'x')));
  ok(wsDesc?.code === 50, 'svc-hdc-write cannot write computers (its ACEs apply to user objects) (50)', wsDesc?.message);
  const wReset = await errorOf(w.modify(alice, replace('unicodePwd', Buffer.from(`"${user('alice').password}"`, 'utf16le'))));
  ok(wReset?.code === 50, 'svc-hdc-write cannot reset a password (50)', wReset?.message);
  await w.unbind();

  const r = await bind(dc.url, T.reset.upn, T.reset.password);
  const pw = (p) => replace('unicodePwd', Buffer.from(`"${p}"`, 'utf16le'));
  const reset = await errorOf(r.modify(alice, pw(user('alice').password)));
  ok(!reset, 'svc-hdc-reset resets alice\'s password (Reset Password right; set to the same seed password)', reset?.message);
  ok(!(await errorOf(r.modify(alice, replace('pwdLastSet', '-1')))), 'svc-hdc-reset writes pwdLastSet of alice');
  ok(!(await errorOf(r.modify(alice, replace('lockoutTime', '0')))), 'svc-hdc-reset writes lockoutTime=0 of alice (unlock)');
  const rStaff = await errorOf(r.modify(user('op-norole').dn, pw(user('op-norole').password)));
  ok(rStaff?.code === 50, 'svc-hdc-reset cannot reset an operator in OU=Staff (50)', rStaff?.message);
  await r.unbind();
  const aliceBind = await errorOf(bind(dc.url, user('alice').upn, user('alice').password).then((c) => c.unbind()));
  ok(!aliceBind, 'alice still binds with her seed password', aliceBind?.message);
  await a.unbind();
}

// --- replication both ways
{
  const [d1, d2] = await Promise.all(seed.dcs.map(async (d) => ({ ...d, client: await bind(d.url, admin.upn, admin.password) })));
  for (const [from, to] of [[d1, d2], [d2, d1]]) {
    const ms = await checkReplication(from, to, { timeoutMs: 30000 }).catch((err) => err);
    ok(typeof ms === 'number' && ms < 15000, `replication ${from.name} -> ${to.name} (${typeof ms === 'number' ? `${ms} ms` : ms.message})`);
  }
  await Promise.all([d1.client.unbind(), d2.client.unbind()]);
}

// --- failover (optional): dc1 stopped, dc2 still answers; dc1 started again
if (process.argv.includes('--failover')) {
  const dcsh = path.join(HERE, 'dc.sh');
  execFileSync(dcsh, ['stop', 'dc1'], { stdio: 'inherit' });
  const down = await errorOf(bind(seed.dcs[0].url, T.read.upn, T.read.password));
  ok(down && typeof down.code !== 'number', 'dc1 stopped: a connection to 127.0.0.1:636 fails (a connection error, not an LDAP result)', down?.message);
  const c = await bind(seed.dcs[1].url, T.read.upn, T.read.password).catch((err) => err);
  const r = c instanceof Client ? await c.search(computer('WS-STD-01').dn, { scope: 'base', attributes: ['cn'] }).catch(() => null) : null;
  ok(r?.searchEntries.length === 1, 'dc1 stopped: dc2 still binds and searches', c?.message);
  if (c instanceof Client) await c.unbind();
  const l = await bind(seed.dcs[1].url, T.laps.upn, T.laps.password).catch((err) => err);
  ok(l instanceof Client, 'dc1 stopped: svc-laps still binds on dc2', l?.message);
  if (l instanceof Client) await l.unbind();
  // a change made on dc2 while dc1 is down reaches dc1 once it runs again
  const a2 = await bind(seed.dcs[1].url, admin.upn, admin.password);
  const token = `written on dc2 while dc1 was down ${Date.now()}`;
  await a2.modify(PROBE_DN, replace('description', token));
  await a2.unbind();
  execFileSync(dcsh, ['start', 'dc1'], { stdio: 'inherit' });
  const back = await errorOf(bind(seed.dcs[0].url, T.read.upn, T.read.password).then((x) => x.unbind()));
  ok(!back, 'dc1 started again: it answers', back?.message);
  const a1 = await bind(seed.dcs[0].url, admin.upn, admin.password);
  const t0 = Date.now();
  let seen = false;
  while (!seen && Date.now() - t0 < 30000) {
    seen = value(await base(a1, PROBE_DN, ['description']), 'description') === token;
    if (!seen) await new Promise((res) => setTimeout(res, 250));
  }
  ok(seen, `dc1 caught up with the change made on dc2 while it was down (${Date.now() - t0} ms after its start)`);
  await a1.unbind();
}

console.log(`${passed} passed, ${failed} failed${notes ? ` (${notes} known Samba deviation(s) noted)` : ''}`);
process.exit(failed ? 1 : 0);
