#!/usr/bin/env bash
# restore.sh <archive>            restore an archive written by backup.sh (with its companion <archive>.database)
# restore.sh --database <file>    restore only the console's database copy under backups/ (a rollback after an upgrade)
# First checks, before stopping anything (exit 2 otherwise): the companion names exactly one
# database file under backups/ that the archive holds, and the archive holds no other; the
# password service's copy (service-backups/, exactly one) beside it; each file a copy of its own
# store, as its image reads it (SQLite's integrity check, the product's table, its own items).
# Then keeps the current state aside (archives/before-restore-<time>.tar.gz), stops the console
# and its password service, restores, starts them and waits until healthy.
set -euo pipefail
INSTANCE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
. "$INSTANCE/common.sh"
[ $# -ge 1 ] || die "usage: restore.sh <archive> | restore.sh --database <file>" 2
load_env
podman_conf
[ "$STORE" = sqlite ] || die "this instance keeps its data in DynamoDB Local: upgrade it first (upgrade.sh)" 2

ONLY_DB=""
SDB=""
mkdir -p "$INSTANCE/run"
CHECK="$(mktemp -d "$INSTANCE/run/restore-check.XXXXXX")"
trap 'rm -rf "$CHECK"' EXIT
if [ "$1" = --database ]; then
  [ $# -eq 2 ] || die "usage: restore.sh --database <file>" 2
  ONLY_DB="backups/$(basename "$2")"
  [[ "$ONLY_DB" =~ ^backups/$COPY_NAME$ ]] || die "$ONLY_DB: not a database copy name" 2
  [ -f "$INSTANCE/$ONLY_DB" ] || die "$ONLY_DB: no such database copy" 2
  DB="$ONLY_DB"
  check_copy console "$INSTANCE/$DB"
else
  ARCHIVE="$1"
  archive_database "$ARCHIVE"
  mapfile -t SERVICE_COPIES < <(grep -E "^service-backups/$COPY_NAME$" <<<"$ARCHIVE_LISTING" || true)
  if [[ "$DB" == *.jsonl ]]; then
    # a copy of the table shared with the password service (before the embedded store): both stores' items
    [ "${#SERVICE_COPIES[@]}" -eq 0 ] || die "the archive holds a password service copy beside a shared-table copy: nothing stopped" 2
  else
    [ "${#SERVICE_COPIES[@]}" -eq 1 ] || die "the archive must hold exactly one password service copy under service-backups/ (it holds ${#SERVICE_COPIES[@]}): nothing stopped" 2
    SDB="${SERVICE_COPIES[0]}"
  fi
  # (an assignment, so that a failed extraction stops here with its exit 2)
  checked="$(archive_file "$ARCHIVE" "$DB" "$CHECK")"
  check_copy console "$checked"
  if [ -n "$SDB" ]; then
    checked="$(archive_file "$ARCHIVE" "$SDB" "$CHECK")"
    check_copy password-service "$checked"
  fi
fi

# 1. the current state, kept aside (with its companion: restorable like any archive)
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
ASIDE="$INSTANCE/archives/before-restore-$STAMP.tar.gz"
CURRENT=()
if podman container exists "$NAME-console"; then
  NOW="$(podman exec "$NAME-console" /usr/local/bin/node /app/main.js admin backup)" || die "could not copy the current database: nothing stopped"
  CURRENT=("backups/$(basename "$NOW")")
fi
if [ ${#CURRENT[@]} -eq 1 ] && podman container exists "$NAME-password-service"; then
  SNOW="$(podman exec "$NAME-password-service" /usr/local/bin/node /app/main.js backup)" || die "could not copy the password service's store: nothing stopped"
  CURRENT+=("service-backups/$(basename "$SNOW")")
fi
ASIDE_TLS=(); [ -d "$INSTANCE/tls" ] && ASIDE_TLS+=(tls)
tar -C "$INSTANCE" -czf "$ASIDE" hdc.env config secrets "${ASIDE_TLS[@]}" "${CURRENT[@]}"
chmod 600 "$ASIDE"
[ ${#CURRENT[@]} -ge 1 ] && printf '%s\n' "${CURRENT[0]}" > "$ASIDE.database" && chmod 600 "$ASIDE.database"
say "current state kept aside: $ASIDE"

# 2. stop the console and its password service
remove_containers console password-service
say "console stopped"

# 3. restore: the files, then each store made exactly its copy
if [ -z "$ONLY_DB" ]; then
  # the console's own certificate when the archive has one
  TLS_MEMBER=(); grep -q '^tls/' <<<"$ARCHIVE_LISTING" && TLS_MEMBER+=(tls)
  tar -C "$INSTANCE" --same-owner -xzf "$ARCHIVE" hdc.env config secrets "${TLS_MEMBER[@]}" "$DB" ${SDB:+"$SDB"}
  # an archive from before the embedded store: its environment file says nothing of the store
  set_env_value "$INSTANCE/hdc.env" HDC_STORE sqlite
  load_env
  podman_conf
fi
ensure_folders
ensure_networks || die "the networks could not be created; the previous state is in $ASIDE"
if [[ "$DB" == *.jsonl ]] && [ -z "$ONLY_DB" ]; then
  load_shared_copy "$(basename "$DB")" || die "the database was not restored; the previous state is in $ASIDE"
else
  admin restore-database "/backups/$(basename "$DB")" --confirm || die "the console's database was not restored; the previous state is in $ASIDE"
  if [ -n "$SDB" ]; then
    service_store_command restore "/backups/$(basename "$SDB")" --confirm || die "the password service's store was not restored; the previous state is in $ASIDE"
  fi
fi

# 4. start and wait until healthy
start_all || die "the containers did not start; the previous state is in $ASIDE"
wait_healthy 120 || die "the console did not become healthy after the restore; the previous state is in $ASIDE"
say "restored from ${ARCHIVE:-$DB}"
