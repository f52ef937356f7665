# shellcheck shell=bash
# The fleet plane's instance (fleet-install.sh, fleet-upgrade.sh, fleet-backup.sh, fleet-restore.sh,
# fleet-renew-tls.sh; docs/containers.md), sourced after common.sh with INSTANCE set to the
# instance directory. One container (hdc-fleet: API, dashboard, 60-second poll) with its SQLite
# file in data/, its secrets in secrets/fleet/ (10001, 0600), its certificate in tls/.

FLEET_ENV_KEYS="HDC_FLEET_NAME HDC_IMAGE_REPOSITORY HDC_IMAGE_TAG HDC_HOST_NAME HDC_PUBLIC_URL HDC_HTTPS_PORT HDC_PORT HDC_BIND HDC_NETWORK HDC_TLS HDC_AUTH HDC_AUTH_SERVER HDC_MACHINE_ID_DIR HDC_TCTL HDC_ACME_EMAIL HDC_ACME_DIRECTORY HDC_DNS_API_URL HDC_DNS_PROPAGATION_SECONDS HDC_ADD_HOSTS"
# shellcheck disable=SC2034 # read by the scripts that source this file
FLEET_SCRIPTS=(common.sh fleet.sh fleet-install.sh fleet-upgrade.sh fleet-backup.sh fleet-restore.sh fleet-renew-tls.sh)

load_fleet_env() {
  [ -f "$INSTANCE/hdc-fleet.env" ] || die "$INSTANCE/hdc-fleet.env not found: not a fleet instance directory" 2
  local k
  for k in $FLEET_ENV_KEYS; do printf -v "$k" '%s' "$(env_value "$INSTANCE/hdc-fleet.env" "$k")"; done
  NAME="${HDC_FLEET_NAME:?}"
  # shellcheck disable=SC2034 # read by image() (common.sh)
  REPOSITORY="${HDC_IMAGE_REPOSITORY:?}"
  # shellcheck disable=SC2034 # read by image() (common.sh)
  TAG="${HDC_IMAGE_TAG:?}"
  NETWORK="${HDC_NETWORK:-bridge}"
  # the port on the host: the HTTPS port with a certificate, otherwise plain HTTP (behind a proxy)
  if [ "${HDC_TLS:-none}" = acme-dns ]; then PORT="${HDC_HTTPS_PORT:-443}"; else PORT="${HDC_PORT:-8080}"; fi
}

fleet_url() { if [ "${HDC_TLS:-none}" = acme-dns ]; then echo "https://127.0.0.1:$PORT"; else echo "http://127.0.0.1:$PORT"; fi; }

ensure_fleet_folders() {
  mkdir -p "$INSTANCE"/{config,secrets/fleet,data,backups,archives,run,tls}
  chmod 700 "$INSTANCE/secrets" "$INSTANCE/archives" "$INSTANCE/run"
  chown "$CONSOLE_UID:$CONSOLE_UID" "$INSTANCE/secrets/fleet" "$INSTANCE/data" "$INSTANCE/backups" "$INSTANCE/tls"
  chmod 700 "$INSTANCE/secrets/fleet" "$INSTANCE/data" "$INSTANCE/backups" "$INSTANCE/tls"
  chmod 755 "$INSTANCE/config"
}

# The DNS-01 certificate (and its renewal): install-tls in a one-off container of the fleet image
# (common.sh, install_tls_in), with the fleet's environment file and extra CA.
run_install_tls() { # [credentials file] -- [more install-tls options]
  local cred="$1"; shift
  # shellcheck disable=SC2207,SC2034 # read by install_tls_in (common.sh)
  TLS_PODMAN_ARGS=(--env-file "$INSTANCE/config/fleet.env" $(fleet_ca_args))
  install_tls_in hdc-fleet "$cred" --name "$HDC_HOST_NAME" --public-url "$HDC_PUBLIC_URL" --https-port "$PORT" "$@"
}

fleet_ca_args() {
  [ -f "$INSTANCE/config/extra-ca.pem" ] && words -v "$INSTANCE/config/extra-ca.pem:/config/extra-ca.pem:ro,Z" -e NODE_EXTRA_CA_CERTS=/config/extra-ca.pem
  return 0
}

# the fleet's store, copies and secrets (one-off commands too)
fleet_volumes() {
  words -e HDC_SQLITE_FILE=/data/fleet.sqlite -e HDC_BACKUP_FOLDER=/backups -e HDC_MASTER_KEY_FILE=/run/secrets/master.key \
    -e SECRETS_ENCRYPTION_KEY_FILE=/run/secrets/channels.key -e AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true \
    -v "$INSTANCE/data:/data:Z" -v "$INSTANCE/backups:/backups:Z" -v "$INSTANCE/secrets/fleet:/run/secrets:ro,Z" \
    --env-file "$INSTANCE/config/fleet.env"
}

# the cluster identity: an identity file (secrets/fleet/identity, from `tctl auth sign`) or
# Machine ID (tbot keeps <machine-id dir>/identity renewed; the container reads it as it changes)
fleet_auth_args() {
  [ -n "${HDC_TCTL:-}" ] && words -v "$HDC_TCTL:/opt/bin/tctl:ro" -e TCTL_PATH=/opt/bin/tctl
  [ -n "${HDC_AUTH_SERVER:-}" ] && words -e "ACCESS_AUTH_SERVER=$HDC_AUTH_SERVER"
  case "${HDC_AUTH:-}" in
    identity) words -e ACCESS_IDENTITY_FILE=/run/secrets/identity ;;
    machine-id) words -v "$HDC_MACHINE_ID_DIR:/run/machine-id:ro,Z" -e ACCESS_MACHINE_ID_IDENTITY=/run/machine-id/identity ;;
  esac
  return 0
}

ensure_fleet_network() {
  [ "$NETWORK" = host ] && return 0
  podman network exists "$NAME-net" || podman network create "$NAME-net" >/dev/null
}

start_fleet() {
  local net tls=()
  if [ "$NETWORK" = host ]; then
    net="--network host -e HDC_LISTEN=${HDC_BIND:-0.0.0.0} -e HDC_PORT=$PORT"
  else
    ensure_fleet_network || return 1
    net="--network $NAME-net -p ${HDC_BIND:-0.0.0.0}:$PORT:8080"
  fi
  if [ "${HDC_TLS:-none}" = acme-dns ]; then
    tls=(-v "$INSTANCE/tls:/tls:ro,Z" -e HDC_TLS_CERT_FILE=/tls/fullchain.pem -e HDC_TLS_KEY_FILE=/tls/privkey.pem)
  fi
  # shellcheck disable=SC2046,SC2086
  podman run -d --name "$NAME-fleet" --restart unless-stopped $net $(add_host_args) "${tls[@]}" \
    $(fleet_volumes) $(fleet_ca_args) $(fleet_auth_args) -e FLEET_PUBLIC_ORIGIN="${HDC_PUBLIC_URL:-}" \
    "$(image hdc-fleet)" >/dev/null || return 1
  say "fleet plane $NAME-fleet started on $(fleet_url)"
}

# one-off commands of the image on the fleet's store, without a network
fleet_store_command() {
  # shellcheck disable=SC2046
  podman run --rm --network none $(fleet_volumes) "$(image hdc-fleet)" "$@"
}

wait_fleet_healthy() { # [seconds]
  # its own certificate, on loopback: the probe checks that it answers, not whom it is for
  wait_url "$NAME-fleet" "$(fleet_url)/health/live" "${1:-90}" -k || return 1
  say "fleet plane healthy on $(fleet_url)"
}

fleet_backup() { # prints backups/<copy>
  local copy
  # by the running container; one that is not running (a version that did not start: an upgrade's
  # rollback) leaves its file at rest, copied by a one-off container of the image set now
  copy="$(podman exec "$NAME-fleet" /usr/local/bin/node /app/main.js backup 2>/dev/null)" || copy="$(fleet_store_command backup)" || return 1
  [ -f "$INSTANCE/backups/$(basename "$copy")" ] || return 1
  echo "backups/$(basename "$copy")"
}
