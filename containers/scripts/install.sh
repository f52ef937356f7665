#!/usr/bin/env bash
# Install (or upgrade, when re-run with a newer --version) a self-hosted console: an instance
# directory with its environment file, configuration, secrets and stores, and two containers
# (password service, console), each with its own SQLite file. docs/containers.md is the runbook.
#
#   install.sh --instance DIR --version TAG [--repository REPO] [--name NAME] [--port PORT]
#              [--domain DOMAIN] [--laps-upn UPN --laps-password-file FILE]
#              [--reset-upn UPN --reset-password-file FILE] [--read-upn UPN] [--write-upn UPN]
#              [--bitlocker-upn UPN --bitlocker-password-file FILE]
#              [--public-url URL] [--network bridge|host] [--bind ADDRESS] [--add-host NAME:ADDRESS]...
#              [--tunnel-credentials-file FILE]
#              [--tls acme-dns --public-url https://HOST[:PORT] --acme-email EMAIL [--dns-setting K=V]...
#               [--dns-credentials-file FILE] [--acme-directory URL] [--dns-api-url URL]
#               [--dns-propagation-seconds N] [--extra-ca-file FILE] [--outbound-allowed-targets LIST]]
#
# Secret values are only ever read from files (never a command line). Everything not given on a
# re-run is kept from the previous run. --add-host: a name the containers resolve (a lab's DCs).
# --tunnel-credentials-file (the access platform's tunnel or agent join credentials): the host's
# own, kept under secrets/host (root, 0600; no container mounts it), backed up and restored.
# --tls acme-dns: the console's own certificate by DNS-01 for the host of --public-url, served on
# --port (install-tls, as the fleet plane's: the DNS credentials kept in secrets/acme-dns.env,
# root's); renew-tls.sh renews it (daily), the running console serves the new one.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
INSTANCE=""
declare -A OPT=()
ADD_HOSTS=()
DNS_SETTINGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --instance) [ $# -ge 2 ] || { echo "error: $1 needs a value" >&2; exit 2; }; INSTANCE="$2"; shift 2 ;;
    --add-host) [ $# -ge 2 ] || { echo "error: $1 needs a value" >&2; exit 2; }; ADD_HOSTS+=("$2"); shift 2 ;;
    --dns-setting) [ $# -ge 2 ] || { echo "error: $1 needs a value" >&2; exit 2; }; DNS_SETTINGS+=("$1" "$2"); shift 2 ;;
    --version|--repository|--name|--port|--domain|--laps-upn|--laps-password-file|--reset-upn|--reset-password-file|--bitlocker-upn|--bitlocker-password-file|--read-upn|--write-upn|--public-url|--network|--bind|--dns-credentials-file|--tunnel-credentials-file|--tls|--acme-email|--acme-directory|--dns-api-url|--dns-propagation-seconds|--extra-ca-file|--outbound-allowed-targets)
      [ $# -ge 2 ] || { echo "error: $1 needs a value" >&2; exit 2; }
      OPT[${1#--}]="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$INSTANCE" ] || { echo "error: --instance DIR is required" >&2; exit 2; }
mkdir -p "$INSTANCE"
INSTANCE="$(cd "$INSTANCE" && pwd)"
# shellcheck source=common.sh
. "$HERE/common.sh"

lower() { tr '[:upper:]' '[:lower:]' <<<"$1"; }
previous() { env_value "$INSTANCE/hdc.env" "$1"; } # the value kept from the last run

NAME_V="${OPT[name]:-$(previous HDC_NAME)}"; NAME_V="${NAME_V:-hdc}"
TAG_V="${OPT[version]:-$(previous HDC_IMAGE_TAG)}"
REPO_V="${OPT[repository]:-$(previous HDC_IMAGE_REPOSITORY)}"; REPO_V="${REPO_V:-localhost}"
PORT_V="${OPT[port]:-$(previous HDC_PORT)}"; PORT_V="${PORT_V:-8443}"
NET_V="${OPT[network]:-$(previous HDC_NETWORK)}"; NET_V="${NET_V:-bridge}"
[[ "$NAME_V" =~ ^[a-z][a-z0-9-]{0,30}$ ]] || die "--name: lower-case letters, digits and dashes" 2
[ -n "$TAG_V" ] || die "--version TAG is required on the first install" 2
valid_tag "$TAG_V" || die "--version $TAG_V: not an image tag (letters, digits, . _ -; never latest)" 2
valid_repo "$REPO_V" || die "--repository $REPO_V: not an image repository (without a tag)" 2
if ! [[ "$PORT_V" =~ ^[0-9]+$ ]] || [ "$PORT_V" -lt 1 ] || [ "$PORT_V" -gt 65533 ]; then die "--port $PORT_V: not a port" 2; fi
# values written to hdc.env: no quotes, spaces, dollars or backquotes (it is read as data, and shown)
for k in domain laps-upn reset-upn bitlocker-upn read-upn write-upn public-url bind acme-email acme-directory dns-api-url dns-propagation-seconds outbound-allowed-targets; do
  v="${OPT[$k]:-}"
  [[ "$v" =~ ^[A-Za-z0-9@._:/+-]*$ ]] || die "--$k: unexpected characters" 2
done
for h in "${ADD_HOSTS[@]}"; do
  [[ "$h" =~ ^[A-Za-z0-9][A-Za-z0-9.-]*:[0-9a-fA-F.:]+$ ]] || die "--add-host $h: NAME:ADDRESS" 2
done
[ "$NET_V" = bridge ] || [ "$NET_V" = host ] || die "--network: bridge or host" 2
HOSTS_V="$(IFS=,; echo "${ADD_HOSTS[*]}")"; HOSTS_V="${HOSTS_V:-$(previous HDC_ADD_HOSTS)}"

LAPS_UPN="${OPT[laps-upn]:-$(previous HDC_LAPS_UPN)}"
RESET_UPN="${OPT[reset-upn]:-$(previous HDC_RESET_UPN)}"
BITLOCKER_UPN="${OPT[bitlocker-upn]:-$(previous HDC_BITLOCKER_UPN)}"
READ_UPN="${OPT[read-upn]:-$(previous HDC_READ_UPN)}"
WRITE_UPN="${OPT[write-upn]:-$(previous HDC_WRITE_UPN)}"
# the LAPS account is never the read, write or reset account (console spec, technical accounts)
if [ -n "$LAPS_UPN" ]; then
  for other in "$READ_UPN" "$WRITE_UPN" "$RESET_UPN"; do
    [ -n "$other" ] && [ "$(lower "$other")" = "$(lower "$LAPS_UPN")" ] && die "the LAPS account $LAPS_UPN must not be the read, write or reset account" 2
  done
fi
# the BitLocker account (issue 33) is its own: never the LAPS, read, write or reset account
if [ -n "$BITLOCKER_UPN" ]; then
  for other in "$LAPS_UPN" "$READ_UPN" "$WRITE_UPN" "$RESET_UPN"; do
    [ -n "$other" ] && [ "$(lower "$other")" = "$(lower "$BITLOCKER_UPN")" ] && die "the BitLocker account $BITLOCKER_UPN must not be the LAPS, read, write or reset account" 2
  done
fi
# the console's own certificate (--tls acme-dns) is for the host of its public URL, on --port
TLS_V="${OPT[tls]:-$(previous HDC_TLS)}"; TLS_V="${TLS_V:-none}"
PUBLIC_V="${OPT[public-url]:-$(previous HDC_PUBLIC_ORIGIN)}"
[ "$TLS_V" = acme-dns ] || [ "$TLS_V" = none ] || die "--tls: acme-dns (the console's own certificate) or none (behind the access platform or a TLS proxy)" 2
if [ "$TLS_V" = acme-dns ]; then
  [[ "$PUBLIC_V" =~ ^https://[A-Za-z0-9.-]+(:([0-9]+))?/?$ ]] || die "--tls acme-dns needs --public-url https://HOST[:PORT]" 2
  [ "${BASH_REMATCH[2]:-443}" = "$PORT_V" ] || die "--public-url's port (${BASH_REMATCH[2]:-443}) differs from --port ($PORT_V)" 2
  [ -n "${OPT[acme-email]:-$(previous HDC_ACME_EMAIL)}" ] || die "--tls acme-dns needs --acme-email" 2
fi
[ -z "${OPT[dns-credentials-file]:-}" ] || [ "$TLS_V" = acme-dns ] || die "--dns-credentials-file is for --tls acme-dns" 2
for f in laps-password-file reset-password-file bitlocker-password-file dns-credentials-file tunnel-credentials-file extra-ca-file; do
  [ -z "${OPT[$f]:-}" ] || [ -f "${OPT[$f]}" ] || die "--$f ${OPT[$f]}: no such file" 2
done

# an instance that exists keeps its image until upgrade.sh pins the new one (a copy first); one
# installed before the embedded store keeps its store mark until upgrade.sh has moved its data
OLD_TAG="$(previous HDC_IMAGE_TAG)"
OLD_REPO="$(previous HDC_IMAGE_REPOSITORY)"
UPGRADE=""
[ -n "$OLD_TAG" ] && { [ "$OLD_TAG" != "$TAG_V" ] || [ "$OLD_REPO" != "$REPO_V" ]; } && UPGRADE=1
STORE_V="sqlite"
[ -f "$INSTANCE/hdc.env" ] && [ -z "$(previous HDC_STORE)" ] && STORE_V=""
[ -z "$STORE_V" ] && [ -z "$UPGRADE" ] && die "this instance still keeps its data in DynamoDB Local: install a version with the embedded store (--version), which moves it" 2
PIN_REPO="$REPO_V"; PIN_TAG="$TAG_V"
if [ -n "$UPGRADE" ]; then
  PIN_REPO="$OLD_REPO"; PIN_TAG="$OLD_TAG"
  # the files of the running version (its scripts included), before this run rewrites them
  HDC_BEFORE_UPGRADE="$(keep_aside before-upgrade)"
  export HDC_BEFORE_UPGRADE
fi

cat > "$INSTANCE/hdc.env.new" <<ENV
# hdc instance (written by install.sh; re-run it to change a value)
HDC_NAME=$NAME_V
HDC_IMAGE_REPOSITORY=$PIN_REPO
HDC_IMAGE_TAG=$PIN_TAG
HDC_PORT=$PORT_V
HDC_NETWORK=$NET_V
HDC_BIND=${OPT[bind]:-$(previous HDC_BIND)}
HDC_DOMAIN=${OPT[domain]:-$(previous HDC_DOMAIN)}
HDC_PUBLIC_ORIGIN=$PUBLIC_V
HDC_TLS=$TLS_V
HDC_ACME_EMAIL=${OPT[acme-email]:-$(previous HDC_ACME_EMAIL)}
HDC_ACME_DIRECTORY=${OPT[acme-directory]:-$(previous HDC_ACME_DIRECTORY)}
HDC_DNS_API_URL=${OPT[dns-api-url]:-$(previous HDC_DNS_API_URL)}
HDC_DNS_PROPAGATION_SECONDS=${OPT[dns-propagation-seconds]:-$(previous HDC_DNS_PROPAGATION_SECONDS)}
HDC_OUTBOUND_ALLOWED_TARGETS=${OPT[outbound-allowed-targets]:-$(previous HDC_OUTBOUND_ALLOWED_TARGETS)}
HDC_LAPS_UPN=$LAPS_UPN
HDC_RESET_UPN=$RESET_UPN
HDC_BITLOCKER_UPN=$BITLOCKER_UPN
HDC_READ_UPN=$READ_UPN
HDC_WRITE_UPN=$WRITE_UPN
HDC_ADD_HOSTS=$HOSTS_V
ENV
[ -n "$STORE_V" ] && echo "HDC_STORE=$STORE_V" >> "$INSTANCE/hdc.env.new"
chmod 600 "$INSTANCE/hdc.env.new"
mv "$INSTANCE/hdc.env.new" "$INSTANCE/hdc.env"
ensure_folders
[ -f "$INSTANCE/config/appsettings.json" ] || echo '{ "Database": { "AutoMigrate": true } }' > "$INSTANCE/config/appsettings.json"
chmod 755 "$INSTANCE/config"; chmod 644 "$INSTANCE/config/appsettings.json"

# secrets: generated once, kept on every re-run; each container's folder readable by its own user only
key_file() { # <file> <uid>
  # 32 random bytes, base64 (the format the console and the password service read)
  [ -s "$1" ] || head -c 32 /dev/urandom | base64 -w0 > "$1"
  chown "$2:$2" "$1"; chmod 600 "$1"
}
secret_from() { # <source file> <dest> <uid>
  # one line, no trailing newline: the password itself
  head -n1 "$1" | tr -d '\r\n' > "$2"
  [ -s "$2" ] || die "$1 is empty" 2
  chown "$3:$3" "$2"; chmod 600 "$2"
}
key_file "$INSTANCE/secrets/console/master.key" "$CONSOLE_UID"
key_file "$INSTANCE/secrets/console/link.key" "$CONSOLE_UID"
# the helpdesk link key: the same key for both containers, each its own copy
cp "$INSTANCE/secrets/console/link.key" "$INSTANCE/secrets/password-service/link.key"
chown "$SERVICE_UID:$SERVICE_UID" "$INSTANCE/secrets/password-service/link.key"; chmod 600 "$INSTANCE/secrets/password-service/link.key"
[ -n "${OPT[laps-password-file]:-}" ] && secret_from "${OPT[laps-password-file]}" "$INSTANCE/secrets/password-service/laps.password" "$SERVICE_UID"
[ -n "${OPT[reset-password-file]:-}" ] && secret_from "${OPT[reset-password-file]}" "$INSTANCE/secrets/password-service/reset.password" "$SERVICE_UID"
[ -n "${OPT[bitlocker-password-file]:-}" ] && secret_from "${OPT[bitlocker-password-file]}" "$INSTANCE/secrets/password-service/bitlocker.password" "$SERVICE_UID"
# the host's credentials (the access platform's tunnel): whole files, root's, in no container
host_secret_from() { # <source file> <dest>
  [ -s "$1" ] || die "$1 is empty" 2
  cp "$1" "$2.new"; chown 0:0 "$2.new"; chmod 600 "$2.new"; mv "$2.new" "$2"
}
[ -n "${OPT[tunnel-credentials-file]:-}" ] && host_secret_from "${OPT[tunnel-credentials-file]}" "$INSTANCE/secrets/host/tunnel-credentials"

# the instance's own copies of the scripts (upgrade.sh is what the fleet's upgrade packs call)
install_scripts "$HERE" "${CONSOLE_SCRIPTS[@]}"

load_env
podman_conf
if [ -n "$UPGRADE" ]; then
  # a newer version: upgrade.sh takes the copy first, pins the image, moves the data when needed
  exec "$INSTANCE/upgrade.sh" "$REPO_V:$TAG_V"
fi
for i in hdc-console hdc-password-service; do
  podman image exists "$(image "$i")" || die "image $(image "$i") not found (build: npm run images -- $TAG; or pull it)"
done
if [ "$TLS_V" = acme-dns ]; then
  # the ACME CA's root for a lab's CA (pebble), read by install-tls only
  [ -n "${OPT[extra-ca-file]:-}" ] && { cp "${OPT[extra-ca-file]}" "$INSTANCE/config/extra-ca.pem"; chmod 644 "$INSTANCE/config/extra-ca.pem"; }
  mkdir -p "$INSTANCE/tls"
  # the certificate first (install-tls checks its own options: exit 2, nothing issued); then the key is the console user's
  console_install_tls "${OPT[dns-credentials-file]:-}" "${DNS_SETTINGS[@]}" || die "the certificate was not installed (install-tls above); nothing started" $?
  own_certificate
fi
remove_containers console password-service
start_all
wait_healthy 120 || die "the console did not become healthy (podman logs $NAME-console)"
say "installed $NAME ($(image hdc-console)) in $INSTANCE"
if [ "$TLS_V" = acme-dns ]; then say "renewal: run $INSTANCE/renew-tls.sh daily (a systemd timer or cron); the running console serves the new certificate"; fi
