#!/usr/bin/env bash
# Install (or upgrade, when re-run with a newer --version) the fleet plane on a host: an instance
# directory and one container (hdc-fleet) serving the API and the dashboard, over TLS with its own
# DNS-01 certificate (--tls acme-dns) or plain HTTP behind a proxy (--tls none). docs/containers.md.
#
#   fleet-install.sh --instance DIR --version TAG [--repository REPO] [--instance-name NAME]
#     --name HOST --public-url https://HOST[:PORT] [--https-port PORT] [--bind ADDRESS] [--network bridge|host]
#     --auth identity --identity-file FILE | --auth machine-id [--machine-id-dir DIR]
#     --auth-server PROXY:PORT [--tctl FILE] [--teleport-local auto]
#     [--admin-password-file FILE] [--config-file FILE] [--extra-ca-file FILE]
#     [--tls acme-dns --acme-email EMAIL --dns-provider dns_main [--dns-setting DNSMAIN_END_POINT=...]
#      [--dns-credentials-file FILE] [--acme-directory URL] [--dns-api-url URL] [--dns-propagation-seconds N]]
#     [--tls none --port PORT] [--add-host NAME:ADDRESS]...
#
# Secrets come from files only (identity, administrator password, DNS credentials), never a
# command line. Everything not given on a re-run is kept from the previous run.
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
    --version|--repository|--instance-name|--name|--public-url|--https-port|--port|--bind|--network|--auth|--identity-file|--machine-id-dir|--auth-server|--tctl|--teleport-local|--admin-password-file|--config-file|--extra-ca-file|--tls|--acme-email|--dns-provider|--dns-credentials-file|--acme-directory|--dns-api-url|--dns-propagation-seconds)
      [ $# -ge 2 ] || { echo "error: $1 needs a value" >&2; exit 2; }
      OPT[${1#--}]="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$INSTANCE" ] || { echo "error: --instance DIR is required" >&2; exit 2; }
mkdir -p "$INSTANCE"
INSTANCE="$(cd "$INSTANCE" && pwd)"
# shellcheck source=common.sh
. "$HERE/common.sh"
# shellcheck source=fleet.sh
. "$HERE/fleet.sh"

previous() { env_value "$INSTANCE/hdc-fleet.env" "$1"; }
opt() { # <option> <kept key>: the value given now, else the one kept
  if [ -n "${OPT[$1]:-}" ]; then echo "${OPT[$1]}"; else previous "$2"; fi
}

NAME_V="$(opt instance-name HDC_FLEET_NAME)"; NAME_V="${NAME_V:-hdc-fleet}"
TAG_V="$(opt version HDC_IMAGE_TAG)"
REPO_V="$(opt repository HDC_IMAGE_REPOSITORY)"; REPO_V="${REPO_V:-localhost}"
HOST_V="$(opt name HDC_HOST_NAME)"
TLS_V="$(opt tls HDC_TLS)"; TLS_V="${TLS_V:-none}"
HTTPS_PORT_V="$(opt https-port HDC_HTTPS_PORT)"; HTTPS_PORT_V="${HTTPS_PORT_V:-443}"
PORT_V="$(opt port HDC_PORT)"; PORT_V="${PORT_V:-8080}"
PUBLIC_V="$(opt public-url HDC_PUBLIC_URL)"
NET_V="$(opt network HDC_NETWORK)"; NET_V="${NET_V:-bridge}"
AUTH_V="$(opt auth HDC_AUTH)"
AUTH_SERVER_V="$(opt auth-server HDC_AUTH_SERVER)"
MID_V="$(opt machine-id-dir HDC_MACHINE_ID_DIR)"
TCTL_V="$(opt tctl HDC_TCTL)"
[ -n "$TCTL_V" ] || TCTL_V="$(command -v tctl || true)"

# every option is checked before anything is written (exit 2)
[[ "$NAME_V" =~ ^[a-z][a-z0-9-]{0,30}$ ]] || die "--instance-name: lower-case letters, digits and dashes" 2
[ -n "$TAG_V" ] || die "--version TAG is required on the first install" 2
valid_tag "$TAG_V" || die "--version $TAG_V: not an image tag (letters, digits, . _ -; never latest)" 2
valid_repo "$REPO_V" || die "--repository $REPO_V: not an image repository (without a tag)" 2
[[ "$HOST_V" =~ ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$ ]] || die "--name: the fleet plane's fully qualified host name" 2
for p in "$HTTPS_PORT_V" "$PORT_V"; do
  if ! [[ "$p" =~ ^[0-9]+$ ]] || [ "$p" -lt 1 ] || [ "$p" -gt 65535 ]; then die "$p: not a port" 2; fi
done
[ "$TLS_V" = acme-dns ] || [ "$TLS_V" = none ] || die "--tls: acme-dns (the fleet plane's own certificate) or none (plain HTTP behind a proxy)" 2
[ "$NET_V" = bridge ] || [ "$NET_V" = host ] || die "--network: bridge or host" 2
if [ "$TLS_V" = acme-dns ]; then
  [ -n "$PUBLIC_V" ] || PUBLIC_V="https://$HOST_V$([ "$HTTPS_PORT_V" = 443 ] || echo ":$HTTPS_PORT_V")"
  [[ "$PUBLIC_V" =~ ^https://([^/:]+)(:([0-9]+))?/?$ ]] || die "--public-url must be https://${HOST_V}[:port]" 2
  [ "${BASH_REMATCH[1]}" = "$HOST_V" ] || die "--public-url must be https://${HOST_V}[:port]: the certificate is issued for --name" 2
  [ "${BASH_REMATCH[3]:-443}" = "$HTTPS_PORT_V" ] || die "--public-url's port (${BASH_REMATCH[3]:-443}) differs from --https-port ($HTTPS_PORT_V)" 2
  PUBLIC_V="https://$HOST_V$([ "$HTTPS_PORT_V" = 443 ] || echo ":$HTTPS_PORT_V")"
  ACME_EMAIL_V="$(opt acme-email HDC_ACME_EMAIL)"
  [[ "$ACME_EMAIL_V" =~ ^[^[:space:]@\'\"\$\`]+@[^[:space:]@\'\"\$\`]+$ ]] || die "--acme-email: the e-mail address the CA writes to about expiry" 2
  [ "${OPT[dns-provider]:-dns_main}" = dns_main ] || die "--dns-provider must be dns_main" 2
fi
for k in public-url auth-server acme-directory dns-api-url bind dns-propagation-seconds; do
  [[ "${OPT[$k]:-}" =~ ^[A-Za-z0-9@._:/+-]*$ ]] || die "--$k: unexpected characters" 2
done
for h in "${ADD_HOSTS[@]}"; do
  [[ "$h" =~ ^[A-Za-z0-9][A-Za-z0-9.-]*:[0-9a-fA-F.:]+$ ]] || die "--add-host $h: NAME:ADDRESS" 2
done
HOSTS_V="$(IFS=,; echo "${ADD_HOSTS[*]}")"; HOSTS_V="${HOSTS_V:-$(previous HDC_ADD_HOSTS)}"
# the cluster identity (fleet spec: --auth identity, expires with its TTL; --auth machine-id, renewed by tbot)
case "$AUTH_V" in
  identity)
    [ -n "${OPT[identity-file]:-}" ] || [ -s "$INSTANCE/secrets/fleet/identity" ] || die "--auth identity needs --identity-file FILE (tctl auth sign --format=file)" 2
    [ -z "${OPT[identity-file]:-}" ] || [ -s "${OPT[identity-file]}" ] || die "--identity-file ${OPT[identity-file]}: no such file" 2 ;;
  machine-id) MID_V="${MID_V:-$INSTANCE/machine-id}" ;;
  *) die "--auth identity|machine-id: the fleet plane's cluster identity (an identity file, or Machine ID renewed by tbot)" 2 ;;
esac
[[ "$MID_V" =~ ^[A-Za-z0-9/._-]*$ ]] || die "--machine-id-dir: unexpected characters" 2
[ -n "$AUTH_SERVER_V" ] || die "--auth-server PROXY:PORT: the access platform's address (tctl --auth-server)" 2
if [ -z "$TCTL_V" ] || [ ! -f "$TCTL_V" ]; then die "the cluster CLI: --tctl FILE (tctl of the access platform's version; none found on PATH)" 2; fi
TCTL_V="$(cd "$(dirname "$TCTL_V")" && pwd)/$(basename "$TCTL_V")"
[[ "$TCTL_V" =~ ^[A-Za-z0-9/._-]+$ ]] || die "--tctl: unexpected characters in its path" 2
[ "${OPT[teleport-local]:-auto}" = auto ] || die "--teleport-local takes auto" 2
for f in admin-password-file config-file extra-ca-file dns-credentials-file; do
  [ -z "${OPT[$f]:-}" ] || [ -f "${OPT[$f]}" ] || die "--$f ${OPT[$f]}: no such file" 2
done
[ -f "$INSTANCE/hdc-fleet.env" ] || [ -n "${OPT[admin-password-file]:-}" ] || die "--admin-password-file FILE: the local administrator's password (first install)" 2
if [ -n "${OPT[config-file]:-}" ]; then
  # KEY=VALUE lines for the fleet plane (docs/fleet.md); comments and blank lines allowed
  bad="$(grep -vnE '^([A-Z][A-Z0-9_]*=.*|[[:space:]]*(#.*)?)$' "${OPT[config-file]}" | head -1 || true)"
  [ -z "$bad" ] || die "--config-file: line ${bad%%:*} is not KEY=VALUE" 2
fi

OLD_TAG="$(previous HDC_IMAGE_TAG)"; OLD_REPO="$(previous HDC_IMAGE_REPOSITORY)"
UPGRADE=""
[ -n "$OLD_TAG" ] && { [ "$OLD_TAG" != "$TAG_V" ] || [ "$OLD_REPO" != "$REPO_V" ]; } && UPGRADE=1
PIN_REPO="$REPO_V"; PIN_TAG="$TAG_V"
[ -n "$UPGRADE" ] && PIN_REPO="$OLD_REPO" && PIN_TAG="$OLD_TAG"
podman_conf
podman image exists "$REPO_V/hdc-fleet:$TAG_V" || podman pull -q "$REPO_V/hdc-fleet:$TAG_V" >/dev/null 2>&1 || die "image $REPO_V/hdc-fleet:$TAG_V not found (build: npm run images -- $TAG_V hdc-fleet; or pull it)" 2

cat > "$INSTANCE/hdc-fleet.env.new" <<ENV
# hdc fleet plane (written by fleet-install.sh; re-run it to change a value)
HDC_FLEET_NAME=$NAME_V
HDC_IMAGE_REPOSITORY=$PIN_REPO
HDC_IMAGE_TAG=$PIN_TAG
HDC_HOST_NAME=$HOST_V
HDC_PUBLIC_URL=$PUBLIC_V
HDC_TLS=$TLS_V
HDC_HTTPS_PORT=$HTTPS_PORT_V
HDC_PORT=$PORT_V
HDC_BIND=$(opt bind HDC_BIND)
HDC_NETWORK=$NET_V
HDC_AUTH=$AUTH_V
HDC_AUTH_SERVER=$AUTH_SERVER_V
HDC_MACHINE_ID_DIR=$MID_V
HDC_TCTL=$TCTL_V
HDC_ACME_EMAIL=${ACME_EMAIL_V:-}
HDC_ACME_DIRECTORY=$(opt acme-directory HDC_ACME_DIRECTORY)
HDC_DNS_API_URL=$(opt dns-api-url HDC_DNS_API_URL)
HDC_DNS_PROPAGATION_SECONDS=$(opt dns-propagation-seconds HDC_DNS_PROPAGATION_SECONDS)
HDC_ADD_HOSTS=$HOSTS_V
ENV
chmod 600 "$INSTANCE/hdc-fleet.env.new"
mv "$INSTANCE/hdc-fleet.env.new" "$INSTANCE/hdc-fleet.env"
ensure_fleet_folders
if [ -n "${OPT[config-file]:-}" ]; then cp "${OPT[config-file]}" "$INSTANCE/config/fleet.env"; fi
[ -f "$INSTANCE/config/fleet.env" ] || echo '# the fleet plane settings (docs/fleet.md): KEY=VALUE' > "$INSTANCE/config/fleet.env"
chmod 644 "$INSTANCE/config/fleet.env"
if [ -n "${OPT[extra-ca-file]:-}" ]; then cp "${OPT[extra-ca-file]}" "$INSTANCE/config/extra-ca.pem"; chmod 644 "$INSTANCE/config/extra-ca.pem"; fi

# secrets: generated once and kept; the container user's only (0600)
own_secret() { chown "$CONSOLE_UID:$CONSOLE_UID" "$1"; chmod 600 "$1"; }
for k in master.key channels.key; do
  [ -s "$INSTANCE/secrets/fleet/$k" ] || head -c 32 /dev/urandom | base64 -w0 > "$INSTANCE/secrets/fleet/$k"
  own_secret "$INSTANCE/secrets/fleet/$k"
done
if [ -n "${OPT[identity-file]:-}" ]; then cp "${OPT[identity-file]}" "$INSTANCE/secrets/fleet/identity"; own_secret "$INSTANCE/secrets/fleet/identity"; fi
[ "$AUTH_V" = identity ] || rm -f "$INSTANCE/secrets/fleet/identity"
if [ "$AUTH_V" = machine-id ] && [ ! -d "$MID_V" ]; then
  mkdir -p "$MID_V"; chown "$CONSOLE_UID:$CONSOLE_UID" "$MID_V"; chmod 700 "$MID_V"
fi

install_scripts "$HERE" "${FLEET_SCRIPTS[@]}"
load_fleet_env

# the certificate first (its options were checked by install-tls itself: exit 2, nothing issued)
if [ "$TLS_V" = acme-dns ]; then
  run_install_tls "${OPT[dns-credentials-file]:-}" "${DNS_SETTINGS[@]}" || die "the certificate was not installed (install-tls above); nothing started" $?
  own_certificate
fi
if [ -n "${OPT[admin-password-file]:-}" ]; then
  # on standard input: never an argument, an environment variable or a file in the container
  # shellcheck disable=SC2046
  head -n1 "${OPT[admin-password-file]}" | podman run --rm -i --network none $(fleet_volumes) "$(image hdc-fleet)" set-admin-password ||
    die "the local administrator's password was not set" 2
fi
if [ -n "$UPGRADE" ]; then
  exec "$INSTANCE/fleet-upgrade.sh" "$REPO_V:$TAG_V"
fi
remove_containers fleet
start_fleet || die "the fleet plane did not start"
wait_fleet_healthy 90 || die "the fleet plane did not become healthy (podman logs $NAME-fleet)"
if [ "$AUTH_V" = machine-id ]; then
  say "Machine ID: tbot writes $MID_V/identity; give the container user read access, e.g."
  say "  tbot start --destination-dir=$MID_V --reader-user=$CONSOLE_UID --auth-server=$AUTH_SERVER_V ..."
fi
if [ "$TLS_V" = acme-dns ]; then
  say "renewal: run $INSTANCE/fleet-renew-tls.sh daily (a systemd timer or cron); the running container serves the new certificate"
fi
say "installed $NAME ($(image hdc-fleet)) in $INSTANCE: $HDC_PUBLIC_URL"
