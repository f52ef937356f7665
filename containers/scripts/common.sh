# shellcheck shell=bash
# Shared by the instance scripts (docs/containers.md): install.sh, upgrade.sh, backup.sh and
# restore.sh of a console instance, and the fleet plane's (fleet.sh adds its own). Sourced with
# INSTANCE set to the instance directory; the console's read its environment file hdc.env.
set -euo pipefail
umask 077

die() { echo "error: $1" >&2; exit "${2:-1}"; }
say() { echo "[hdc] $*"; }

# the users of the images (containers/build.ts): each container's secrets and store belong to its own user
export CONSOLE_UID=10001
export SERVICE_UID=10002
ENV_KEYS="HDC_NAME HDC_IMAGE_REPOSITORY HDC_IMAGE_TAG HDC_STORE HDC_PORT HDC_NETWORK HDC_BIND HDC_DOMAIN HDC_PUBLIC_ORIGIN HDC_LAPS_UPN HDC_RESET_UPN HDC_BITLOCKER_UPN HDC_READ_UPN HDC_WRITE_UPN HDC_ADD_HOSTS HDC_TLS HDC_ACME_EMAIL HDC_ACME_DIRECTORY HDC_DNS_API_URL HDC_DNS_PROPAGATION_SECONDS HDC_OUTBOUND_ALLOWED_TARGETS"
CONSOLE_SCRIPTS=(common.sh install.sh upgrade.sh backup.sh restore.sh renew-tls.sh)
# a copy's file name under backups/ (SQLite copies; JSON lines from an instance on DynamoDB Local)
COPY_NAME='[A-Za-z0-9_][A-Za-z0-9_.-]*\.(sqlite|jsonl)'

# one value of an environment file, read as data (the file is never executed)
env_value() { # <file> <key>
  [ -f "$1" ] || return 0
  grep -m1 "^$2=" "$1" | cut -d= -f2- || true
}
# set (or add) one KEY=value line of an environment file
set_env_value() { # <file> <key> <value>
  if grep -q "^$2=" "$1"; then sed -i -e "s|^$2=.*|$2=$3|" "$1"; else printf '%s=%s\n' "$2" "$3" >> "$1"; fi
}

# an image tag or repository that a shell could read as something else is refused
valid_tag() { [[ "$1" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] && [ "$1" != latest ]; }
valid_repo() { [[ "$1" =~ ^[a-z0-9]([a-z0-9._:/-]*[a-z0-9])?$ ]] && [[ "$1" != *:*/*:* ]]; }

load_env() {
  [ -f "$INSTANCE/hdc.env" ] || die "$INSTANCE/hdc.env not found: not an instance directory" 2
  local k
  for k in $ENV_KEYS; do printf -v "$k" '%s' "$(env_value "$INSTANCE/hdc.env" "$k")"; done
  NAME="${HDC_NAME:?}"
  REPOSITORY="${HDC_IMAGE_REPOSITORY:?}"
  TAG="${HDC_IMAGE_TAG:?}"
  NETWORK="${HDC_NETWORK:-bridge}"
  PORT="${HDC_PORT:-8443}"
  # an instance installed before the embedded store has no HDC_STORE: DynamoDB Local (hdc-dynamodb, data/db)
  # shellcheck disable=SC2034 # read by the scripts that source this file
  STORE="${HDC_STORE:-dynamodb}"
}

image() { echo "$REPOSITORY/$1:$TAG"; }

# podman on these hosts: runc with explicit ulimits (crun fails on hybrid cgroups)
podman_conf() {
  if [ -z "${CONTAINERS_CONF:-}" ]; then
    local hard; hard="$(ulimit -Hn)"
    mkdir -p "$INSTANCE/run"
    printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=32768:32768"]\n\n[engine]\nruntime = "runc"\n' "$hard" "$hard" > "$INSTANCE/run/containers.conf"
    export CONTAINERS_CONF="$INSTANCE/run/containers.conf"
  fi
}

# the instance's own copies of a release's scripts (<from> holds them)
install_scripts() { # <from> <script>...
  local from="$1" s; shift
  for s in "$@"; do
    [ "$from/$s" -ef "$INSTANCE/$s" ] || cp "$from/$s" "$INSTANCE/$s.new"
    [ -f "$INSTANCE/$s.new" ] && mv "$INSTANCE/$s.new" "$INSTANCE/$s"
    chmod 700 "$INSTANCE/$s"
  done
}

# the instance's files as they are (environment, configuration, secrets, scripts), for a rollback
keep_aside() { # <label>: prints the archive's path
  local archive s files=(hdc.env)
  archive="$INSTANCE/archives/$1-$(date -u +%Y%m%dT%H%M%SZ).tar.gz"
  mkdir -p "$INSTANCE/archives"; chmod 700 "$INSTANCE/archives"
  for s in config secrets tls "${CONSOLE_SCRIPTS[@]}"; do [ -e "$INSTANCE/$s" ] && files+=("$s"); done
  tar -C "$INSTANCE" -czf "$archive" "${files[@]}"
  chmod 600 "$archive"
  echo "$archive"
}

# folders, each its container user's: the console's store, copies and secrets (10001), the
# password service's (10002); neither container mounts the other's
ensure_folders() {
  mkdir -p "$INSTANCE"/{config,secrets/console,secrets/password-service,secrets/host,data/console,data/password-service,backups,service-backups,archives,run}
  chmod 700 "$INSTANCE/secrets" "$INSTANCE/secrets/host" "$INSTANCE/archives" "$INSTANCE/run"
  chown "$CONSOLE_UID:$CONSOLE_UID" "$INSTANCE/secrets/console" "$INSTANCE/data/console" "$INSTANCE/backups"
  chown "$SERVICE_UID:$SERVICE_UID" "$INSTANCE/secrets/password-service" "$INSTANCE/data/password-service" "$INSTANCE/service-backups"
  chmod 700 "$INSTANCE/secrets/console" "$INSTANCE/secrets/password-service" "$INSTANCE/data/password-service" "$INSTANCE/backups" "$INSTANCE/service-backups"
  # the console's store: its group (the password service's container) reads it
  chmod 750 "$INSTANCE/data/console"
}

ensure_networks() {
  [ "$NETWORK" = host ] && return 0
  # internal: the console and its password service, no route out; edge: the console's published
  # port and its own way out (the DCs for its read and write accounts, channels, the access
  # platform); egress: the password service's way to the DCs, nothing published
  podman network exists "$NAME-internal" || podman network create --internal "$NAME-internal" >/dev/null
  podman network exists "$NAME-edge" || podman network create "$NAME-edge" >/dev/null
  podman network exists "$NAME-egress" || podman network create "$NAME-egress" >/dev/null
  no_published_ports "$NAME-internal"
}

# Podman's CNI backend (Debian 12's podman 4.3) maps a published port on every network of the
# container, in no set order: the console's port sometimes led to its address on the internal
# network, which has no route from the host. An internal network maps no port (as netavark does):
# its portmap plugin is taken out of its CNI configuration (rewritten by the image's Node).
no_published_ports() { # <network>
  local conf="/etc/cni/net.d/$1.conflist"
  [ "$(podman info --format '{{.Host.NetworkBackend}}' 2>/dev/null)" = cni ] && [ -f "$conf" ] || return 0
  grep -q '"portmap"' "$conf" || return 0
  podman run --rm --network none --user 0 -v "$conf:/conflist.json" --entrypoint /usr/local/bin/node "$(image hdc-console)" -e \
    "const fs=require('fs');const c=JSON.parse(fs.readFileSync('/conflist.json','utf8'));c.plugins=c.plugins.filter((p)=>p.type!=='portmap');fs.writeFileSync('/conflist.json',JSON.stringify(c,null,3)+'\\n')" ||
    { echo "error: $conf: the portmap plugin could not be removed" >&2; return 1; }
}

# The password service's fixed address on the internal network (.250 of its subnet): it listens
# there only, so nothing on another network (edge, egress, the host) reaches its port; the console
# names it through --add-host (container names do not resolve on every podman network backend).
service_ip() {
  local subnet
  subnet="$(podman network inspect "$NAME-internal" --format '{{range .Subnets}}{{.Subnet}}{{end}}')" || return 1
  [[ "$subnet" =~ ^([0-9]+\.[0-9]+\.[0-9]+)\.0/(1[6-9]|2[0-4])$ ]] || { echo "error: $NAME-internal has subnet '$subnet' (a /16 to /24 is expected)" >&2; return 1; }
  echo "${BASH_REMATCH[1]}.250"
}
service_endpoint() { if [ "$NETWORK" = host ]; then echo "http://127.0.0.1:$((PORT + 1))"; else echo "http://$NAME-password-service:9000"; fi; }

# extra names for a lab's DCs (HDC_ADD_HOSTS: name:address,...): real hosts use their DNS
add_host_args() {
  local h
  for h in ${HDC_ADD_HOSTS//,/ }; do printf -- '--add-host %s ' "$h"; done
}

# arguments as one line of words (the callers split it again; no value holds a space)
words() { printf '%s ' "$@"; }

common_env() {
  echo "-e AWS_REGION=local -e AWS_ACCESS_KEY_ID=local -e AWS_SECRET_ACCESS_KEY=local -e AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true -e HDC_CONFIG_FILE=/config/appsettings.json"
}

# The password service's store, copies, secrets and configuration (one-off commands too). It reads
# the console's directory settings from the console's file, read only (HDC_CONSOLE_SQLITE_FILE):
# the console's folder mounted read only, readable through the console's group, which the service
# joins; the console mounts nothing of the service's.
service_volumes() {
  words -e HDC_SQLITE_FILE=/data/password-service.sqlite -e HDC_BACKUP_FOLDER=/backups \
    -e HDC_CONSOLE_SQLITE_FILE=/console-data/console.sqlite --group-add "$CONSOLE_UID" \
    -v "$INSTANCE/data/password-service:/data:Z" -v "$INSTANCE/service-backups:/backups:Z" \
    -v "$INSTANCE/data/console:/console-data:ro,z" \
    -v "$INSTANCE/secrets/password-service:/run/secrets:ro,Z" -v "$INSTANCE/config:/config:ro,Z"
}

start_password_service() {
  local net listen
  if [ "$NETWORK" = host ]; then
    net="--network host"; listen="-e HDC_LISTEN=127.0.0.1 -e HDC_PORT=$((PORT + 1))"
  else
    local ip; ip="$(service_ip)" || return 1
    net="--network $NAME-internal:ip=$ip --network $NAME-egress"; listen="-e HDC_LISTEN=$ip"
  fi
  # shellcheck disable=SC2046,SC2086
  podman run -d --name "$NAME-password-service" --restart unless-stopped $net $(add_host_args) \
    $(common_env) $listen $(service_volumes) \
    -e HDC_LINK_KEY_FILE=/run/secrets/link.key \
    -e HDC_LAPS_UPN="${HDC_LAPS_UPN:-}" -e HDC_LAPS_PASSWORD_FILE=/run/secrets/laps.password \
    -e HDC_RESET_UPN="${HDC_RESET_UPN:-}" -e HDC_RESET_PASSWORD_FILE=/run/secrets/reset.password \
    -e HDC_BITLOCKER_UPN="${HDC_BITLOCKER_UPN:-}" -e HDC_BITLOCKER_PASSWORD_FILE=/run/secrets/bitlocker.password \
    -e HDC_PWD_DOMAIN="${HDC_DOMAIN:-}" \
    "$(image hdc-password-service)" >/dev/null || return 1
  say "password service $NAME-password-service started (no published port)"
}

# the console's store (its group may read it: the password service), copies, secrets and configuration
console_volumes() {
  words --umask 0027 -e HDC_SQLITE_FILE=/data/console.sqlite -e HDC_SQLITE_GROUP_READ=1 -e Database__BackupFolder=/backups \
    -e HDC_MASTER_KEY_FILE=/run/secrets/master.key -e HDC_LINK_KEY_FILE=/run/secrets/link.key \
    -v "$INSTANCE/data/console:/data:z" -v "$INSTANCE/backups:/backups:Z" \
    -v "$INSTANCE/secrets/console:/run/secrets:ro,Z" -v "$INSTANCE/config:/config:ro,Z"
}

console_args() {
  local net listen=""
  if [ "$NETWORK" = host ]; then
    net="--network host"; listen="-e HDC_LISTEN=${HDC_BIND:-0.0.0.0} -e HDC_PORT=$PORT"
  else
    net="--network $NAME-internal --network $NAME-edge -p ${HDC_BIND:-0.0.0.0}:$PORT:8080 --add-host $NAME-password-service:$(service_ip)"
  fi
  # shellcheck disable=SC2046,SC2086
  echo $net $(add_host_args) $(common_env) $listen $(console_volumes) \
    -e HDC_LAMBDA_ENDPOINT="$(service_endpoint)" -e HDC_PASSWORD_SERVICE_FUNCTION=hdc-password-service-passwordService \
    -e Hosting__PublicOrigin="${HDC_PUBLIC_ORIGIN:-}" -e Helpdesk__Enabled="${HDC_HELPDESK:-true}" \
    -e Helpdesk__LapsIdentityUpn="${HDC_LAPS_UPN:-}" -e Helpdesk__BitlockerIdentityUpn="${HDC_BITLOCKER_UPN:-}" $(console_tls_args)
}

# The console's own DNS-01 certificate (--tls acme-dns): served from tls/ (the container user's),
# a renewal picked up without a restart (containers/main.ts)
console_tls_args() {
  [ "${HDC_TLS:-none}" = acme-dns ] && [ -f "$INSTANCE/tls/fullchain.pem" ] || return 0
  words -v "$INSTANCE/tls:/tls:ro,Z" -e HDC_TLS_CERT_FILE=/tls/fullchain.pem -e HDC_TLS_KEY_FILE=/tls/privkey.pem
}

start_console() {
  # shellcheck disable=SC2046
  podman run -d --name "$NAME-console" --restart unless-stopped $(console_args) "$(image hdc-console)" >/dev/null || return 1
  say "console $NAME-console started"
}

# the admin command line in a one-off console container beside the running ones
admin() {
  # shellcheck disable=SC2046
  podman run --rm $(console_args | sed -e 's/-p [^ ]*//') "$(image hdc-console)" admin "$@"
}
# one-off commands of an image on its own store, without a network (containers/store-copies.ts)
console_store_command() {
  # shellcheck disable=SC2046
  podman run --rm --network none $(common_env) $(console_volumes) "$(image hdc-console)" "$@"
}
service_store_command() {
  # shellcheck disable=SC2046
  podman run --rm --network none $(common_env) $(service_volumes) "$(image hdc-password-service)" "$@"
}

# The archive's database file, as restore.sh checks it (console spec, Backup and restore 2) before
# anything is stopped: the companion <archive>.database names exactly one database file under
# backups/ that the archive holds, and the archive holds no other. Every refusal exits 2.
ARCHIVE_LISTING=""
archive_database() { # <archive>: sets DB and ARCHIVE_LISTING
  local archive="$1" named
  [ -f "$archive" ] || die "$archive: no such archive" 2
  [ -f "$archive.database" ] || die "$archive.database: the companion file is missing" 2
  mapfile -t named < <(grep -v '^[[:space:]]*$' "$archive.database" || true)
  [ "${#named[@]}" -eq 1 ] || die "the companion file must name exactly one database file (it names ${#named[@]}): nothing stopped" 2
  DB="${named[0]}"
  [[ "$DB" =~ ^backups/$COPY_NAME$ ]] || die "the companion file names '$DB', not a database file under backups/: nothing stopped" 2
  ARCHIVE_LISTING="$(tar -tzf "$archive" 2>/dev/null)" || die "$archive is not a readable archive: nothing stopped" 2
  grep -qx -- "$DB" <<<"$ARCHIVE_LISTING" || die "the archive does not hold $DB: nothing stopped" 2
  [ "$(grep -cE "^backups/.*\.(sqlite|jsonl)$" <<<"$ARCHIVE_LISTING")" -eq 1 ] || die "the archive holds more than one database file: nothing stopped" 2
}

# one file of an archive, for a check (under run/, root's)
archive_file() { # <archive> <member> <into dir>
  tar -C "$3" --no-same-owner -xzf "$1" "$2" || die "cannot read $2 from the archive: nothing stopped" 2
  echo "$3/$2"
}

# Is <file> a copy of the <role>'s store? Read by the role's image (SQLite or JSON lines, the
# product's table, the role's items only), before anything is stopped. Exit 2 when it is not.
check_copy() { # <role: console|password-service> <file on the host>
  local dir base uid="$CONSOLE_UID"
  [ "$1" = password-service ] && uid="$SERVICE_UID"
  mkdir -p "$INSTANCE/run"
  dir="$(mktemp -d "$INSTANCE/run/check.XXXXXX")"; base="$(basename "$2")"
  cp "$2" "$dir/$base"; chown -R "$uid:$uid" "$dir"; chmod 700 "$dir"
  if ! podman run --rm --network none -v "$dir:/check:ro,Z" "$(image "hdc-$1")" check-copy "/check/$base"; then
    rm -rf "$dir"; die "$base is not a copy of the $1's store: nothing stopped" 2
  fi
  rm -rf "$dir"
}

# A copy of the table the console shared with its password service (an instance on DynamoDB
# Local, JSON lines under backups/) into the two stores: cut in two by the console's image, the
# console's part restored by `admin restore-database`, the service's by its own image.
load_shared_copy() { # <copy file name under backups/>
  local base="${1%.jsonl}"
  # called as `load_shared_copy … || rollback`: errexit is off here, so every step says it failed
  console_store_command split-copy "/backups/$1" >/dev/null || return 1
  mv "$INSTANCE/backups/$base.password-service.jsonl" "$INSTANCE/service-backups/" || return 1
  chown "$SERVICE_UID:$SERVICE_UID" "$INSTANCE/service-backups/$base.password-service.jsonl" || return 1
  admin restore-database "/backups/$base.console.jsonl" --confirm || return 1
  service_store_command restore "/backups/$base.password-service.jsonl" --confirm || return 1
}

console_url() { if [ "${HDC_TLS:-none}" = acme-dns ]; then echo "https://127.0.0.1:$PORT"; else echo "http://127.0.0.1:$PORT"; fi; }

# until <url> answers 200, or the container gave up (it exited or keeps restarting): exit 1 then
wait_url() { # <container> <url> <seconds> [curl options]
  local c="$1" url="$2" deadline=$((SECONDS + $3)); shift 3
  while [ $SECONDS -lt $deadline ]; do
    if curl --noproxy '*' -fsS -m 3 "$@" "$url" >/dev/null 2>&1; then return 0; fi
    local state; state="$(podman inspect -f '{{.State.Status}} {{.RestartCount}}' "$c" 2>/dev/null || echo missing)"
    case "$state" in missing|exited*|*" "[2-9]|*" "[1-9][0-9]*) echo "error: $c is not running ($state)" >&2; return 1 ;; esac
    sleep 1
  done
  return 1
}

wait_healthy() { # [seconds]
  # the console's own certificate is issued for its name, not for this loopback probe: -k here only
  wait_url "$NAME-console" "$(console_url)/health/ready" "${1:-90}" -k || return 1
  say "console healthy on $(console_url)"
}

# one `podman rm` per container: podman 4.3 (Debian 12) given several names of which one is missing
# removes none of them and still exits 0, so a half-created instance would block the next start
remove_containers() { # role...
  for c in "$@"; do
    podman rm -f -t 10 "$NAME-$c" >/dev/null 2>&1 || true
  done
}

# db: the DynamoDB Local container of an instance from before the embedded store
stop_all() { remove_containers console password-service db; }

# each step's failure is returned (callers use `start_all || rollback`, where errexit is off)
start_all() {
  ensure_networks || return 1
  start_password_service || return 1
  start_console || return 1
}

# The certificate's key is the container user's (install-tls writes it as root, at every renewal):
# the console's and the fleet plane's user (10001).
own_certificate() {
  [ -f "$INSTANCE/tls/privkey.pem" ] || return 0
  chown "$CONSOLE_UID:$CONSOLE_UID" "$INSTANCE/tls" "$INSTANCE/tls/privkey.pem" "$INSTANCE/tls/fullchain.pem"
  chmod 600 "$INSTANCE/tls/privkey.pem"
}

# The DNS-01 certificate (and its renewal) of a console or a fleet plane: install-tls (the fleet's
# code, functions/fleet/install-tls.ts, in both images) in a one-off container of <image>, as root
# on the host's network (it reaches the CA and the DNS API as the host does), the instance directory
# mounted; the credentials file, when given, read only. The caller sets TLS_PODMAN_ARGS (an array:
# its environment and CA) and passes install-tls's options. Its exit code is returned.
TLS_PODMAN_ARGS=()
install_tls_in() { # <image> <credentials file|""> [install-tls options]
  local img="$1" cred="$2"; shift 2
  local args=(--tls acme-dns --dns-provider dns_main --acme-email "$HDC_ACME_EMAIL" --instance-dir /instance)
  [ -n "${HDC_ACME_DIRECTORY:-}" ] && args+=(--acme-directory "$HDC_ACME_DIRECTORY")
  [ -n "${HDC_DNS_API_URL:-}" ] && args+=(--dns-api-url "$HDC_DNS_API_URL")
  [ -n "${HDC_DNS_PROPAGATION_SECONDS:-}" ] && args+=(--dns-propagation-seconds "$HDC_DNS_PROPAGATION_SECONDS")
  local mounts=(-v "$INSTANCE:/instance:Z")
  [ -n "$cred" ] && mounts+=(-v "$cred:/run/dns-credentials:ro") && args+=(--dns-credentials-file /run/dns-credentials)
  podman run --rm --user 0 --network host "${mounts[@]}" "${TLS_PODMAN_ARGS[@]}" "$(image "$img")" install-tls "${args[@]}" "$@"
}

# the console's: its name and port from its public URL, its lab's allowed targets and CA
console_install_tls() { # <credentials file|""> [install-tls options]
  local host
  host="$(sed -E 's#^https://([^/:]+).*#\1#' <<<"$HDC_PUBLIC_ORIGIN")"
  TLS_PODMAN_ARGS=(-e "FLEET_OUTBOUND_ALLOWED_TARGETS=${HDC_OUTBOUND_ALLOWED_TARGETS:-}")
  [ -f "$INSTANCE/config/extra-ca.pem" ] && TLS_PODMAN_ARGS+=(-v "$INSTANCE/config/extra-ca.pem:/config/extra-ca.pem:ro,Z" -e NODE_EXTRA_CA_CERTS=/config/extra-ca.pem)
  install_tls_in hdc-console "$@" --name "$host" --public-url "$HDC_PUBLIC_ORIGIN" --https-port "$PORT"
}
