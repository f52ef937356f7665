#!/usr/bin/env bash
# fleet-restore.sh <archive>           restore an archive written by fleet-backup.sh (with its <archive>.database)
# fleet-restore.sh --database <file>   restore only a store copy under backups/ (a rollback after an upgrade)
# The console's refusals, first and before stopping anything (exit 2): the companion names exactly
# one database file under backups/ that the archive holds, the archive holds no other, and that
# file is a copy of the fleet plane's store as its image reads it. Then keeps the current state
# aside (archives/before-restore-<time>.tar.gz), stops the fleet plane, restores, starts it and
# waits until healthy.
set -euo pipefail
INSTANCE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
. "$INSTANCE/common.sh"
# shellcheck source=fleet.sh
. "$INSTANCE/fleet.sh"
[ $# -ge 1 ] || die "usage: fleet-restore.sh <archive> | fleet-restore.sh --database <file>" 2
load_fleet_env
podman_conf
mkdir -p "$INSTANCE/run"
CHECK="$(mktemp -d "$INSTANCE/run/restore-check.XXXXXX")"
trap 'rm -rf "$CHECK"' EXIT
ONLY_DB=""
if [ "$1" = --database ]; then
  [ $# -eq 2 ] || die "usage: fleet-restore.sh --database <file>" 2
  ONLY_DB="backups/$(basename "$2")"
  [[ "$ONLY_DB" =~ ^backups/$COPY_NAME$ ]] || die "$ONLY_DB: not a database copy name" 2
  [ -f "$INSTANCE/$ONLY_DB" ] || die "$ONLY_DB: no such database copy" 2
  DB="$ONLY_DB"
  check_copy fleet "$INSTANCE/$DB"
else
  ARCHIVE="$1"
  archive_database "$ARCHIVE"
  checked="$(archive_file "$ARCHIVE" "$DB" "$CHECK")"
  check_copy fleet "$checked"
fi

# 1. the current state, kept aside (with its companion)
ASIDE="$INSTANCE/archives/before-restore-$(date -u +%Y%m%dT%H%M%SZ).tar.gz"
CURRENT=()
if podman container exists "$NAME-fleet"; then
  NOW="$(fleet_backup)" || die "could not copy the current store: nothing stopped"
  CURRENT=("$NOW")
fi
tar -C "$INSTANCE" -czf "$ASIDE" hdc-fleet.env config secrets tls "${CURRENT[@]}"
chmod 600 "$ASIDE"
[ ${#CURRENT[@]} -eq 1 ] && printf '%s\n' "${CURRENT[0]}" > "$ASIDE.database" && chmod 600 "$ASIDE.database"
say "current state kept aside: $ASIDE"

# 2. stop, 3. restore the files and the store (made exactly the copy)
remove_containers fleet
say "fleet plane stopped"
if [ -z "$ONLY_DB" ]; then
  tar -C "$INSTANCE" --same-owner -xzf "$ARCHIVE" hdc-fleet.env config secrets tls "$DB"
  load_fleet_env
  podman_conf
fi
ensure_fleet_folders
fleet_store_command restore "/backups/$(basename "$DB")" --confirm || die "the store was not restored; the previous state is in $ASIDE"

# 4. start and wait until healthy
start_fleet || die "the fleet plane did not start; the previous state is in $ASIDE"
wait_fleet_healthy 90 || die "the fleet plane did not become healthy after the restore; the previous state is in $ASIDE"
say "restored from ${ARCHIVE:-$DB}"
