# shellcheck shell=bash
# Shared by install.sh, upgrade.sh, backup.sh and restore.sh (docs/containers.md). Sourced with
# INSTANCE set to the instance directory; reads its environment file hdc.env.
set -euo pipefail
umask 077

die() { echo "error: $*" >&2; exit "${2:-1}"; }
say() { echo "[hdc] $*"; }

# the users of the images (containers/build.ts): each container's secrets belong to its own user
export CONSOLE_UID=10001
export SERVICE_UID=10002
ENV_KEYS="HDC_NAME HDC_IMAGE_REPOSITORY HDC_IMAGE_TAG HDC_PORT HDC_NETWORK HDC_BIND HDC_DOMAIN HDC_PUBLIC_ORIGIN HDC_LAPS_UPN HDC_RESET_UPN HDC_READ_UPN HDC_WRITE_UPN"

# one value of an environment file, read as data (the file is never executed)
env_value() { # <file> <key>
  [ -f "$1" ] || return 0
  grep -m1 "^$2=" "$1" | cut -d= -f2- || true
}

load_env() {
  [ -f "$INSTANCE/hdc.env" ] || die "$INSTANCE/hdc.env not found: not an instance directory" 2
  local k
  for k in $ENV_KEYS; do printf -v "$k" '%s' "$(env_value "$INSTANCE/hdc.env" "$k")"; done
  NAME="${HDC_NAME:?}"
  REPOSITORY="${HDC_IMAGE_REPOSITORY:?}"
  TAG="${HDC_IMAGE_TAG:?}"
  NETWORK="${HDC_NETWORK:-bridge}"
  PORT="${HDC_PORT:-8443}"
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

# host network (single-host labs, a directory on this host's loopback): loopback ports derived from PORT
db_endpoint() { if [ "$NETWORK" = host ]; then echo "http://127.0.0.1:$((PORT + 2))"; else echo "http://$NAME-db:8000"; fi; }
service_endpoint() { if [ "$NETWORK" = host ]; then echo "http://127.0.0.1:$((PORT + 1))"; else echo "http://$NAME-password-service:9000"; fi; }

ensure_networks() {
  [ "$NETWORK" = host ] && return 0
  # internal: the store and the password service, no route out; edge: the console's published port;
  # egress: the password service's way to the domain controllers (no published port)
  podman network exists "$NAME-internal" || podman network create --internal "$NAME-internal" >/dev/null
  podman network exists "$NAME-edge" || podman network create "$NAME-edge" >/dev/null
  podman network exists "$NAME-egress" || podman network create "$NAME-egress" >/dev/null
}

net_args() { # <role>
  if [ "$NETWORK" = host ]; then echo "--network host"; return; fi
  case "$1" in
    db) echo "--network $NAME-internal" ;;
    password-service) echo "--network $NAME-internal --network $NAME-egress" ;;
    console) echo "--network $NAME-internal --network $NAME-edge -p ${HDC_BIND:-0.0.0.0}:$PORT:8080" ;;
  esac
}

common_env() {
  echo "-e DYNAMODB_ENDPOINT=$(db_endpoint) -e HDC_TABLE=hdc -e AWS_REGION=local -e AWS_ACCESS_KEY_ID=local -e AWS_SECRET_ACCESS_KEY=local -e AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true -e HDC_CONFIG_FILE=/config/appsettings.json"
}

start_db() {
  podman container exists "$NAME-db" && return 0
  local port_args=()
  [ "$NETWORK" = host ] && port_args=(-port "$((PORT + 2))")
  # shellcheck disable=SC2046
  podman run -d --name "$NAME-db" --restart unless-stopped $(net_args db) \
    -v "$INSTANCE/data/db:/data:Z" "$(image hdc-dynamodb)" "${port_args[@]}" >/dev/null || return 1
  say "store $NAME-db started"
}

start_password_service() {
  local s="$INSTANCE/secrets/password-service"
  local listen=""
  [ "$NETWORK" = host ] && listen="-e HDC_LISTEN=127.0.0.1 -e HDC_PORT=$((PORT + 1))"
  # shellcheck disable=SC2046,SC2086
  podman run -d --name "$NAME-password-service" --restart unless-stopped $(net_args password-service) \
    $(common_env) $listen \
    -e HDC_LINK_KEY_FILE=/run/secrets/link.key \
    -e HDC_LAPS_UPN="${HDC_LAPS_UPN:-}" -e HDC_LAPS_PASSWORD_FILE=/run/secrets/laps.password \
    -e HDC_RESET_UPN="${HDC_RESET_UPN:-}" -e HDC_RESET_PASSWORD_FILE=/run/secrets/reset.password \
    -e HDC_PWD_DOMAIN="${HDC_DOMAIN:-}" \
    -v "$s:/run/secrets:ro,Z" -v "$INSTANCE/config:/config:ro,Z" \
    "$(image hdc-password-service)" >/dev/null || return 1
  say "password service $NAME-password-service started (no published port)"
}

console_args() {
  local listen=""
  [ "$NETWORK" = host ] && listen="-e HDC_LISTEN=${HDC_BIND:-0.0.0.0} -e HDC_PORT=$PORT"
  # shellcheck disable=SC2046,SC2086
  echo $(net_args console) $(common_env) $listen \
    -e HDC_MASTER_KEY_FILE=/run/secrets/master.key -e HDC_LINK_KEY_FILE=/run/secrets/link.key \
    -e HDC_LAMBDA_ENDPOINT="$(service_endpoint)" -e HDC_PASSWORD_SERVICE_FUNCTION=hdc-password-service-passwordService \
    -e Hosting__PublicOrigin="${HDC_PUBLIC_ORIGIN:-}" -e Helpdesk__Enabled="${HDC_HELPDESK:-true}" \
    -e Helpdesk__LapsIdentityUpn="${HDC_LAPS_UPN:-}" -e Database__BackupFolder=/backups \
    -v "$INSTANCE/secrets/console:/run/secrets:ro,Z" -v "$INSTANCE/config:/config:ro,Z" -v "$INSTANCE/backups:/backups:Z"
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

console_url() { echo "http://127.0.0.1:$PORT"; }

wait_healthy() { # [seconds]
  local deadline=$((SECONDS + ${1:-90}))
  while [ $SECONDS -lt $deadline ]; do
    if curl -fsS -m 3 "$(console_url)/health/ready" >/dev/null 2>&1; then say "console healthy on $(console_url)"; return 0; fi
    sleep 1
  done
  return 1
}

# one `podman rm` per container: podman 4.3 (Debian 12) given several names of which one is missing
# removes none of them and still exits 0, so a half-created instance would block the next start
remove_containers() { # role...
  for c in "$@"; do
    podman rm -f -t 10 "$NAME-$c" >/dev/null 2>&1 || true
  done
}

stop_all() { remove_containers console password-service db; }

# each step's failure is returned (callers use `start_all || rollback`, where errexit is off)
start_all() {
  ensure_networks || return 1
  start_db || return 1
  start_password_service || return 1
  start_console || return 1
}
