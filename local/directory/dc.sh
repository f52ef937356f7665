#!/bin/bash
# dc.sh : the local test directory of hdc, a real Active Directory (Samba 4 AD DC from Debian
# packages): realm CORP.EXAMPLE.TEST, dc1 on 127.0.0.1 and dc2 on 127.0.0.2, LDAPS 636 with a
# test CA, the LAPS schema, the seed data (seed.mjs) and the technical accounts' rights.
# Loopback only; needs root. Described in docs/local-directory.md.
#
#   dc.sh ensure             install what is missing; provision + seed when not provisioned yet,
#                            else just start both DCs; always rewrite seed.json from the directory
#   dc.sh start [dc1|dc2]    start the DC(s) (both by default), detached; wait until LDAPS answers
#   dc.sh stop  [dc1|dc2]    stop the DC(s) (both by default) by the PID samba wrote; wait until gone
#   dc.sh status             JSON: provisioned, and per DC running + pid
#   dc.sh reprovision        stop, wipe local/.data/directory, ensure
#
# State: local/.data/directory/ (dc1/, dc2/, ca/, logs/, ns/, seed.json, provisioned).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
mkdir -p "$REPO/local/.data"
# the real path: running DCs are recognised by the files they hold open (a checkout may link .data)
DATA="$(cd "$REPO/local/.data" && pwd -P)/directory"
# Bump when provisioning or the seed changes in a way an existing directory lacks: the next
# ensure then reprovisions instead of starting the old directory.
LAYOUT=1
REALM=CORP.EXAMPLE.TEST; NETBIOS=CORP; DNSDOMAIN=corp.example.test; BASE=DC=corp,DC=example,DC=test
ADMIN_PW='Passw0rd!Admin'
ADMIN=(-U "Administrator%$ADMIN_PW")
PACKAGES="samba samba-ad-dc samba-ad-provision samba-dsdb-modules samba-vfs-modules winbind ldb-tools oathtool openssl"
START_TIMEOUT_MS=120000
export HDC_DIRECTORY_ADMIN_PASSWORD="$ADMIN_PW"
# Samba's own krb5.conf for the realm: nothing in /etc/krb5.conf is needed or touched
export KRB5_CONFIG="$DATA/dc1/private/krb5.conf"

T0=$(date +%s%3N)
say() { local t=$(( $(date +%s%3N) - T0 )); printf '[directory %d.%ds] %s\n' $((t / 1000)) $((t % 1000 / 100)) "$*"; }
die() { say "ERROR: $*" >&2; exit 1; }
ip_of() { case $1 in dc1) echo 127.0.0.1 ;; dc2) echo 127.0.0.2 ;; *) die "unknown DC '$1' (dc1 or dc2)" ;; esac; }
dcs_of() { echo "${1:-dc1 dc2}"; }

# --- private mount namespace: /etc/resolv.conf -> the DCs' own DNS, /etc/hosts knows dc1/dc2.
# Every lookup Samba, samba-tool or Kerberos makes stays on loopback; the host's files are untouched.
# shellcheck disable=SC2016 # $0 and $@ belong to the inner sh
NS=(unshare -m --propagation private sh -c \
  'mount --bind "$0/resolv.conf" /etc/resolv.conf && mount --bind "$0/hosts" /etc/hosts && exec "$@"' "$DATA/ns")
ns() { "${NS[@]}" "$@"; }
write_ns_files() {
  mkdir -p "$DATA/ns"
  printf 'nameserver 127.0.0.1\nnameserver 127.0.0.2\nsearch %s\noptions timeout:1 attempts:1\n' "$DNSDOMAIN" > "$DATA/ns/resolv.conf"
  printf '127.0.0.1 localhost\n127.0.0.1 dc1.%s dc1\n127.0.0.2 dc2.%s dc2\n' "$DNSDOMAIN" "$DNSDOMAIN" > "$DATA/ns/hosts"
}

# run LOG CMD... : CMD's output goes to logs/LOG.log; on failure show its tail and stop
run() {
  local log="$DATA/logs/$1.log"; shift
  if ! "$@" >> "$log" 2>&1; then tail -n 25 "$log" >&2; die "failed: $* (log: $log)"; fi
}

lock() { # one dc.sh at a time changes the directory (fd 9; never inherited by samba)
  mkdir -p "$DATA"
  exec 9> "$DATA/.lock"
  flock -w 900 9 || die "another dc.sh holds $DATA/.lock"
}

# --- packages (idempotent; apt-get update only when something is missing)
install_packages() {
  local p missing=() created_policy=0
  for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || die "root is needed to install: ${missing[*]}"
    say "installing Debian packages: ${missing[*]}"
    mkdir -p "$DATA/logs"
    # package scripts must never start smbd/nmbd/samba with the default configuration
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; created_policy=1
    fi
    export DEBIAN_FRONTEND=noninteractive
    # samba-ad-provision is only a Recommends of samba-ad-dc: it is named explicitly
    if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } > "$DATA/logs/apt.log" 2>&1; then
      [ "$created_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
      tail -n 20 "$DATA/logs/apt.log" >&2; die "apt-get failed (log: $DATA/logs/apt.log)"
    fi
    [ "$created_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
    say "installed: $(samba --version)"
  fi
  for p in node unshare setsid flock openssl; do command -v "$p" >/dev/null || die "'$p' is missing"; done
  [ -d "$REPO/node_modules/ldapts" ] || die "ldapts is missing: run 'npm ci' in $REPO first"
}

# --- processes
pid_of() { # PID of DC $1's samba root process if it runs, else nothing
  local f="$DATA/$1/run/samba.pid" p
  [ -f "$f" ] || return 0
  p=$(tr -dc 0-9 < "$f")
  [ -n "$p" ] || return 0
  # a samba of this directory: the executable is samba (it rewrites its command line to
  # 'samba: root process') and it holds files of this DC's directory open (sam.ldb, samba.pid)
  case $(readlink "/proc/$p/exe" 2>/dev/null) in */samba | */samba\ \(deleted\)) ;; *) return 0 ;; esac
  local fd
  for fd in "/proc/$p/fd/"*; do
    case $(readlink "$fd" 2>/dev/null) in "$DATA/$1/"*) echo "$p"; return 0 ;; esac
  done
}

start_dc() { # start DC $1 detached (own session, stdio to a log, no inherited descriptors)
  local n=$1 ip p
  ip=$(ip_of "$n")
  [ -f "$DATA/$n/etc/smb.conf" ] || die "$n is not provisioned (run: dc.sh ensure)"
  p=$(pid_of "$n")
  if [ -n "$p" ]; then say "$n already running (pid $p)"; return 0; fi
  write_ns_files
  mkdir -p "$DATA/logs"
  rm -f "$DATA/$n/run/samba.pid"
  setsid "${NS[@]}" samba -F -s "$DATA/$n/etc/smb.conf" \
    < /dev/null >> "$DATA/logs/$n-stdout.log" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  echo $! > "$DATA/$n/run/launcher.pid"   # the same process once samba runs (setsid and sh exec)
  say "$n starting on $ip"
}

wait_ready() { # wait until an LDAPS bind as Administrator works on each DC named
  local urls=() n
  for n in "$@"; do urls+=("ldaps://$(ip_of "$n"):636,$DATA/$n/run/launcher.pid"); done
  if ! node "$HERE/wait.mjs" "$START_TIMEOUT_MS" "${urls[@]}"; then
    for n in "$@"; do tail -n 15 "$DATA/logs/$n.log" "$DATA/logs/$n-stdout.log" >&2 2>/dev/null || true; done
    die "DC(s) $* did not answer LDAPS within $((START_TIMEOUT_MS / 1000)) s"
  fi
}

stop_dc() { # stop_dc NAME... : SIGTERM to the PID samba wrote (samba then ends its process group),
  # all at once, then wait until every process of those groups is gone (SIGKILL after 15 s)
  local n p i pids=() names=() left=()
  for n in "$@"; do
    p=$(pid_of "$n")
    if [ -z "$p" ]; then say "$n is not running"; rm -f "$DATA/$n/run/launcher.pid"; continue; fi
    kill -TERM "$p" 2>/dev/null || true
    pids+=("$p"); names+=("$n")
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  group_left() { local g; for g in "${pids[@]}"; do pgrep -g "$g" || true; done; }
  for i in $(seq 1 150); do [ -z "$(group_left)" ] && break; sleep 0.1; done
  mapfile -t left < <(group_left)
  if [ ${#left[@]} -gt 0 ]; then
    say "processes ${left[*]} still there after 15 s: SIGKILL"
    kill -KILL "${left[@]}" 2>/dev/null || true
    for i in $(seq 1 50); do [ -z "$(group_left)" ] && break; sleep 0.1; done
  fi
  for i in "${!names[@]}"; do
    rm -f "$DATA/${names[$i]}/run/samba.pid" "$DATA/${names[$i]}/run/launcher.pid"
    say "${names[$i]} stopped (pid ${pids[$i]})"
  done
}

# --- provisioning
tune_smbconf() { # make a provisioned/joined smb.conf self-contained and loopback-only
  local n=$1 conf="$DATA/$1/etc/smb.conf"
  mkdir -p "$DATA/$n/run" "$DATA/logs"
  # provision copies the host's nameserver into 'dns forwarder': drop it (the DNS never asks out)
  sed -i -e '/^\s*dns forwarder\s*=/d' -e '/^\s*log file\s*=/d' -e '/^\s*panic action\s*=/d' \
         -e '/^\s*server services\s*=/d' "$conf"
  # nbt/wrepl (NetBIOS broadcasts) and dnsupdate off; every runtime path inside $DATA;
  # replication: partners notified after 1 s (default 5 s), a first pull 2 s after start (default
  # 15 s; a restarted DC catches up at once), then a pull every 60 s (default 300 s);
  # ldb:nosync skips fsync on each ldb commit (a throw-away test directory)
  sed -i "/^\[global\]/a\\
\tlog file = $DATA/logs/$n.log\\
\tmax log size = 20000\\
\tlog level = 1\\
\tpid directory = $DATA/$n/run\\
\tncalrpc dir = $DATA/$n/run/ncalrpc\\
\twinbindd socket directory = $DATA/$n/run/winbindd\\
\tntp signd socket directory = $DATA/$n/run/ntp_signd\\
\tserver services = -nbt -wrepl -dnsupdate\\
\tdisable netbios = yes\\
\tdreplsrv:notify_interval = 1\\
\tdreplsrv:periodic_startup_interval = 2\\
\tdreplsrv:periodic_interval = 60\\
\tsmb ports = 445\\
\tldb:nosync = true\\
\tidmap_ldb:use rfc2307 = yes\\
\tdsdb:schema update allowed = yes" "$conf"
}

make_ca() { # one test CA for both DCs; ca.pem holds the certificate only
  local ca="$DATA/ca"
  mkdir -p "$ca"; chmod 700 "$ca"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/O=hdc local test/CN=hdc local test directory CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$ca/ca.key" -out "$ca/ca.pem" 2>/dev/null
  chmod 600 "$ca/ca.key"; chmod 644 "$ca/ca.pem"; chmod 755 "$ca"
}

issue_cert() { # server certificate for DC $1: SAN DNS:<fqdn>, DNS:<name>, IP:<ip>; set in its smb.conf
  local n=$1 ip t
  ip=$(ip_of "$n"); t="$DATA/$n/private/tls-hdc"
  mkdir -p "$t"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$n.$DNSDOMAIN" -keyout "$t/key.pem" -out "$t/req.csr" 2>/dev/null
  printf 'subjectAltName=DNS:%s.%s,DNS:%s,IP:%s\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\nbasicConstraints=critical,CA:FALSE\n' \
    "$n" "$DNSDOMAIN" "$n" "$ip" > "$t/ext.cnf"
  openssl x509 -req -in "$t/req.csr" -CA "$DATA/ca/ca.pem" -CAkey "$DATA/ca/ca.key" -CAcreateserial \
    -days 3650 -extfile "$t/ext.cnf" -out "$t/cert.pem" 2>/dev/null
  chmod 600 "$t/key.pem"; cp "$DATA/ca/ca.pem" "$t/ca.pem"
  sed -i "/^\[global\]/a\\
\ttls enabled = yes\\
\ttls keyfile = $t/key.pem\\
\ttls certfile = $t/cert.pem\\
\ttls cafile = $t/ca.pem" "$DATA/$n/etc/smb.conf"
}

# schemaIDGUIDs by lDAPDisplayName (they differ per provision for the added LAPS attributes)
declare -A GUID SID
lookup_guids() {
  local filter="" a name="" val=""
  for a in "$@"; do filter="$filter(lDAPDisplayName=$a)"; done
  while read -r k v; do
    case $k in
      dn:) name=""; val="" ;;
      lDAPDisplayName:) name=$v ;;
      schemaIDGUID:) val=$v ;;
    esac
    if [ -n "$name" ] && [ -n "$val" ]; then GUID[$name]=$val; name=""; val=""; fi
  done < <(ns ldbsearch -H ldap://127.0.0.1 "${ADMIN[@]}" -b "CN=Schema,CN=Configuration,$BASE" "(|$filter)" lDAPDisplayName schemaIDGUID)
  for a in "$@"; do [ -n "${GUID[$a]:-}" ] || die "schema has no $a"; done
}
lookup_sids() {
  local filter="" a name="" val=""
  for a in "$@"; do filter="$filter(sAMAccountName=$a)"; done
  while read -r k v; do
    case $k in
      dn:) name=""; val="" ;;
      sAMAccountName:) name=$v ;;
      objectSid:) val=$v ;;
    esac
    if [ -n "$name" ] && [ -n "$val" ]; then SID[$name]=$val; name=""; val=""; fi
  done < <(ns ldbsearch -H ldap://127.0.0.1 "${ADMIN[@]}" -b "$BASE" "(|$filter)" sAMAccountName objectSid)
  for a in "$@"; do [ -n "${SID[$a]:-}" ] || die "no account $a"; done
}

dsacl() { run acl ns samba-tool dsacl set -H ldap://127.0.0.1 "${ADMIN[@]}" --objectdn="$1" --sddl="$2"; }

# The write account's rights: the delegation export's model (lib/delegation/model.ts) for a managed
# OU where every delegable action is delegated (local/directory/write-rights.ts prints it, one ACE
# a line, names for GUIDs), resolved here into SDDL. Sets WRITE_MODEL (the named form) and WRITE_SDDL.
write_model_sddl() {
  WRITE_MODEL=$(cd "$REPO" && "$REPO/node_modules/.bin/tsx" "$HERE/write-rights.ts") || die "could not compute the write account's rights model"
  local line f names=() W
  while read -r line; do
    IFS=';' read -r -a f <<< "${line:1:${#line}-2}"
    [ -n "${f[3]}" ] && names+=("${f[3]}")
    [ -n "${f[4]}" ] && names+=("${f[4]}")
  done <<< "$WRITE_MODEL"
  lookup_guids $(printf '%s\n' "${names[@]}" | sort -u)
  lookup_sids svc-hdc-write
  W=${SID[svc-hdc-write]}
  WRITE_SDDL=""
  while read -r line; do
    IFS=';' read -r -a f <<< "${line:1:${#line}-2}"
    WRITE_SDDL="$WRITE_SDDL(${f[0]};${f[1]};${f[2]};${f[3]:+${GUID[${f[3]}]}};${f[4]:+${GUID[${f[4]}]}};$W)"
  done <<< "$WRITE_MODEL"
}

# An existing directory gets the write model's new rights (a new delegable action) at the next
# ensure: granted again whenever the model differs from the one recorded (samba-tool dsacl set
# skips an ACE the DACL already holds). OU=NoLapsRights keeps its protected DACL as provisioned.
grant_write_model() {
  write_model_sddl
  [ "$(cat "$DATA/write-rights" 2>/dev/null)" = "$WRITE_MODEL" ] && return 0
  say "dc1: the write account's rights from the delegation model (samba-tool dsacl)"
  dsacl "OU=Managed,$BASE" "$WRITE_SDDL"
  dsacl "OU=Branch,$BASE" "$WRITE_SDDL"
  printf '%s\n' "$WRITE_MODEL" > "$DATA/write-rights"
}

grant_rights() { # the technical accounts' delegations, as inheritable object ACEs (CIIO)
  local MANAGED="OU=Managed,$BASE" BRANCH="OU=Branch,$BASE" NORIGHTS="OU=NoLapsRights,OU=Managed,$BASE"
  local RESET_PASSWORD=00299570-246d-11d0-a768-00aa006e0529   # User-Force-Change-Password extended right
  write_model_sddl
  lookup_guids user computer lockoutTime pwdLastSet ms-Mcs-AdmPwd ms-Mcs-AdmPwdExpirationTime msLAPS-Password msLAPS-PasswordExpirationTime
  lookup_sids svc-hdc-reset svc-laps
  local R=${SID[svc-hdc-reset]} L=${SID[svc-laps]} U=${GUID[user]} C=${GUID[computer]}
  local write="$WRITE_SDDL"
  local reset="(OA;CIIO;CR;$RESET_PASSWORD;$U;$R)(OA;CIIO;WP;${GUID[lockoutTime]};$U;$R)(OA;CIIO;WP;${GUID[pwdLastSet]};$U;$R)"
  # LAPS: read (RP + Control Access) the clear-text passwords, write the expiration times; never
  # any right on msLAPS-EncryptedPassword (or its property set)
  local laps="(OA;CIIO;RPCR;${GUID[msLAPS-Password]};$C;$L)(OA;CIIO;RPCR;${GUID[ms-Mcs-AdmPwd]};$C;$L)"
  laps="$laps(OA;CIIO;WP;${GUID[msLAPS-PasswordExpirationTime]};$C;$L)(OA;CIIO;WP;${GUID[ms-Mcs-AdmPwdExpirationTime]};$C;$L)"
  dsacl "$MANAGED" "$write$reset$laps"
  dsacl "$BRANCH" "$write$reset$laps"
  # OU=NoLapsRights sits below OU=Managed: block inheritance there (the DACL becomes protected; the
  # inherited ACEs become explicit ones, except svc-laps' ACEs), then grant svc-laps Read Property
  # without Control Access, so the confidential password attributes stay hidden from it.
  local sd
  # (LDIF folds long lines: unfold before taking the value)
  sd=$(ns ldbsearch -H ldap://127.0.0.1 "${ADMIN[@]}" -b "$NORIGHTS" -s base nTSecurityDescriptor \
       | sed -e ':a' -e 'N' -e '$!ba' -e 's/\n //g' | sed -n 's/^nTSecurityDescriptor: //p')
  [ -n "$sd" ] || die "could not read the security descriptor of $NORIGHTS"
  sd=$(printf '%s' "$sd" | node -e '
    const [L] = process.argv.slice(1); let sd = require("fs").readFileSync(0, "utf8").trim();
    const m = sd.match(/^(.*?D:)([A-Z]*)(\(.*?)(S:.*)?$/);
    if (!m) { console.error("unexpected SDDL: " + sd); process.exit(1); }
    const flags = m[2].includes("P") ? m[2] : "P" + m[2];
    const aces = m[3].match(/\([^)]*\)/g).filter(a => !a.endsWith(";" + L + ")"))
      .map(a => { const f = a.slice(1, -1).split(";"); f[1] = (f[1].match(/../g) || []).filter(x => x !== "ID").join(""); return "(" + f.join(";") + ")"; });
    process.stdout.write(m[1] + flags + [...new Set(aces)].join("") + (m[4] || ""));' "$L")
  printf 'dn: %s\nchangetype: modify\nreplace: nTSecurityDescriptor\nnTSecurityDescriptor: %s\n-\n' "$NORIGHTS" "$sd" > "$DATA/logs/noLapsRights-sd.ldif"
  run "acl-protect" ns ldbmodify -H ldap://127.0.0.1 "${ADMIN[@]}" "$DATA/logs/noLapsRights-sd.ldif"
  dsacl "$NORIGHTS" "(OA;CIIO;RP;${GUID[msLAPS-Password]};$C;$L)(OA;CIIO;RP;${GUID[ms-Mcs-AdmPwd]};$C;$L)"
  printf '%s\n' "$WRITE_MODEL" > "$DATA/write-rights"
}

# BitLocker (issue 33): recovery objects (msFVE-RecoveryInformation, in Samba's base schema) and
# the rights on them. svc-bitlocker alone reads msFVE-RecoveryPassword (RP + Control Access: the
# attribute is confidential, searchFlags 664); svc-hdc-read reads the objects' other attributes
# (key id, volume, date) for the console's list, never the password (no Control Access). Granted on
# OU=Managed and OU=Branch after OU=NoLapsRights was protected: nothing reaches that OU, whose
# recovery object no account of hdc can read (the directory is the last check). An existing
# directory gains all of it at the next ensure (marker $DATA/bitlocker).
BITLOCKER_LAYOUT=2
ensure_bitlocker() {
  [ "$(cat "$DATA/bitlocker" 2>/dev/null)" = "$BITLOCKER_LAYOUT" ] && return 0
  say "dc1: BitLocker account, its rights, then the recovery objects (they inherit the rights when created)"
  node "$HERE/seed.mjs" bitlocker-account
  lookup_guids msFVE-RecoveryInformation msFVE-RecoveryPassword
  lookup_sids svc-bitlocker svc-hdc-read
  local B=${SID[svc-bitlocker]} R=${SID[svc-hdc-read]} F=${GUID[msFVE-RecoveryInformation]}
  local aces="(OA;CIIO;RPLCLORC;;$F;$B)(OA;CIIO;RPCR;${GUID[msFVE-RecoveryPassword]};$F;$B)(OA;CIIO;RPLCLORC;;$F;$R)"
  dsacl "OU=Managed,$BASE" "$aces"
  dsacl "OU=Branch,$BASE" "$aces"
  node "$HERE/seed.mjs" bitlocker
  printf '%s\n' "$BITLOCKER_LAYOUT" > "$DATA/bitlocker"
}

provision() {
  say "provisioning a new directory in $DATA"
  stop_dc dc2 dc1 >/dev/null
  find "$DATA" -mindepth 1 -maxdepth 1 ! -name .lock -exec rm -rf {} +
  mkdir -p "$DATA/logs"; write_ns_files
  PROVISIONING=1   # a failed provisioning leaves no DC running (see on_exit; the next ensure starts over)

  say "dc1: samba-tool domain provision (realm $REALM, 127.0.0.1)"
  run dc1-provision ns samba-tool domain provision --use-rfc2307 --server-role=dc --dns-backend=SAMBA_INTERNAL \
    --realm="$REALM" --domain="$NETBIOS" --host-name=dc1 --host-ip=127.0.0.1 --adminpass="$ADMIN_PW" \
    --targetdir="$DATA/dc1" --option="interfaces=127.0.0.1/8" --option="bind interfaces only=yes" --option="ldb:nosync=true"
  tune_smbconf dc1
  make_ca
  issue_cert dc1
  start_dc dc1
  wait_ready dc1
  # provision skips 127.0.0.1 as a host address, and the dnsupdate service is off: register once
  say "dc1: DNS records and SPNs"
  run dc1-dnsupdate ns samba_dnsupdate -s "$DATA/dc1/etc/smb.conf" --use-samba-tool --current-ip=127.0.0.1 --rpc-server-ip=127.0.0.1
  run dc1-spnupdate ns samba_spnupdate -s "$DATA/dc1/etc/smb.conf"

  say "dc1: schema extension (legacy + Windows LAPS attributes)"
  sed -e "s/@SCHEMA@/CN=Schema,CN=Configuration,$BASE/g" -e "s/@CONFIG@/CN=Configuration,$BASE/g" \
    "$HERE/laps-schema.ldif.in" > "$DATA/logs/laps-schema.ldif"
  run laps-schema ns ldbmodify -H ldap://127.0.0.1 "${ADMIN[@]}" "$DATA/logs/laps-schema.ldif"

  say "dc1: seed (OUs, groups, users, computers, LAPS values) over LDAPS"
  node "$HERE/seed.mjs" provision
  say "dc1: rights of svc-hdc-write, svc-hdc-reset, svc-laps (samba-tool dsacl)"
  grant_rights
  rm -f "$DATA/bitlocker"
  ensure_bitlocker

  say "dc2: samba-tool domain join (127.0.0.2)"
  run dc2-join ns samba-tool domain join "$DNSDOMAIN" DC --server=127.0.0.1 -U "$NETBIOS\\Administrator%$ADMIN_PW" \
    --targetdir="$DATA/dc2" --dns-backend=SAMBA_INTERNAL --option="netbios name=DC2" \
    --option="interfaces=127.0.0.2/8" --option="bind interfaces only=yes" --option="ldb:nosync=true"
  tune_smbconf dc2
  issue_cert dc2
  # DC2's A/SRV/CNAME (<ntds guid>._msdcs) records in DC1's DNS, so DC1 finds DC2 to replicate
  run dc2-dnsupdate ns samba_dnsupdate -s "$DATA/dc2/etc/smb.conf" --use-samba-tool --current-ip=127.0.0.2 --rpc-server-ip=127.0.0.1
  start_dc dc2
  wait_ready dc2
  run dc2-spnupdate ns samba_spnupdate -s "$DATA/dc2/etc/smb.conf"
  # Replication topology: dc1 pulls each partition from dc2 once and the KCC on dc1 adds dc2 as its
  # source. dc1 starts notifying dc2 of its changes only after dc2 has pulled from it in a
  # periodic run (dc1 then reloads its partners); dc2 does one 2 s after it starts
  # (periodic_startup_interval): restart dc2 once, else dc1 -> dc2 waits up to periodic_interval.
  say "replication topology (KCC and pulls on dc1, restart of dc2)"
  local nc
  for nc in "$BASE" "CN=Configuration,$BASE" "CN=Schema,CN=Configuration,$BASE" "DC=DomainDnsZones,$BASE" "DC=ForestDnsZones,$BASE"; do
    run drs-replicate ns samba-tool drs replicate 127.0.0.1 DC2 "$nc" "${ADMIN[@]}"
  done
  run drs-kcc ns samba-tool drs kcc 127.0.0.1 "${ADMIN[@]}"
  stop_dc dc2
  start_dc dc2
  wait_ready dc2
  node "$HERE/seed.mjs" replication
  node "$HERE/seed.mjs" describe
  printf 'layout=%s\ndata=%s\nprovisioned=%s\n' "$LAYOUT" "$DATA" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$DATA/provisioned"
  PROVISIONING=0
  say "provisioned: dc1 ldaps://127.0.0.1:636, dc2 ldaps://127.0.0.2:636, CA $DATA/ca/ca.pem, seed $DATA/seed.json"
}

is_provisioned() { # the marker exists, for this layout and this location of the repository
  [ -f "$DATA/provisioned" ] || return 1
  if ! grep -qx "layout=$LAYOUT" "$DATA/provisioned"; then say "directory layout changed: reprovisioning"; return 1; fi
  if ! grep -qxF "data=$DATA" "$DATA/provisioned"; then say "directory was provisioned at another path: reprovisioning"; return 1; fi
}

ensure() {
  install_packages
  if is_provisioned; then
    start_dc dc1; start_dc dc2
    wait_ready dc1 dc2
    grant_write_model
    ensure_bitlocker
    node "$HERE/seed.mjs" describe
    say "ready: dc1 ldaps://127.0.0.1:636, dc2 ldaps://127.0.0.2:636, seed $DATA/seed.json"
  else
    provision
  fi
}

status() {
  local n p first=1 prov=false
  [ -f "$DATA/provisioned" ] && prov=true
  printf '{"provisioned":%s,"dcs":[' "$prov"
  for n in dc1 dc2; do
    p=$(pid_of "$n")
    [ "$first" = 1 ] || printf ','
    first=0
    if [ -n "$p" ]; then
      printf '{"name":"%s","host":"%s","running":true,"pid":%s}' "$n" "$(ip_of "$n")" "$p"
    else
      printf '{"name":"%s","host":"%s","running":false,"pid":null}' "$n" "$(ip_of "$n")"
    fi
  done
  printf ']}\n'
}

PROVISIONING=0
on_exit() {
  local rc=$?
  if [ "$PROVISIONING" = 1 ] && [ "$rc" != 0 ]; then
    say "provisioning failed: stopping the DCs (logs: $DATA/logs)" >&2
    stop_dc dc2 dc1 >/dev/null 2>&1 || true
  fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cmd=${1:-}
case ${2:-} in ""|dc1|dc2) ;; *) die "unknown DC '$2' (dc1 or dc2)" ;; esac
case $cmd in ensure | start | stop | reprovision) [ "$(id -u)" = 0 ] || die "dc.sh $cmd needs root (mount namespace, Samba)" ;; esac
case $cmd in
  ensure) lock; ensure ;;
  start)
    lock
    [ -f "$DATA/provisioned" ] || die "not provisioned (run: dc.sh ensure)"
    read -r -a dcs <<< "$(dcs_of "${2:-}")"
    for n in "${dcs[@]}"; do start_dc "$n"; done
    wait_ready "${dcs[@]}"
    ;;
  stop) lock; read -r -a dcs <<< "$(dcs_of "${2:-}")"; stop_dc "${dcs[@]}" ;;
  status) status ;;
  reprovision) lock; install_packages; rm -f "$DATA/provisioned"; provision ;;
  "" | help | -h | --help) sed -n "2,14p" "$0" | sed "s/^# \{0,1\}//" ;;
  *) sed -n "2,14p" "$0" | sed "s/^# \{0,1\}//" >&2; exit 2 ;;
esac
