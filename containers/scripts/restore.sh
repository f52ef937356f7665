#!/usr/bin/env bash
# restore.sh <archive>            restore an archive written by backup.sh (with its companion <archive>.database)
# restore.sh --database <file>    restore only a database copy under backups/ (a rollback after an upgrade)
# First checks that the companion file names exactly one database file under backups/ that the
# archive holds; otherwise exits 2 before stopping anything. Then keeps the current state aside
# (archives/before-restore-<time>.tar.gz), stops the console, restores, starts and waits until healthy.
set -euo pipefail
INSTANCE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
. "$INSTANCE/common.sh"
[ $# -ge 1 ] || die "usage: restore.sh <archive> | restore.sh --database <file>" 2
load_env
podman_conf

ONLY_DB=""
if [ "$1" = --database ]; then
  [ $# -eq 2 ] || die "usage: restore.sh --database <file>" 2
  ONLY_DB="backups/$(basename "$2")"
  [ -f "$INSTANCE/$ONLY_DB" ] || die "$ONLY_DB: no such database copy" 2
  DB="$ONLY_DB"
else
  ARCHIVE="$1"
  [ -f "$ARCHIVE" ] || die "$ARCHIVE: no such archive" 2
  [ -f "$ARCHIVE.database" ] || die "$ARCHIVE.database: the companion file is missing" 2
  mapfile -t NAMED < <(grep -v '^[[:space:]]*$' "$ARCHIVE.database" || true)
  [ "${#NAMED[@]}" -eq 1 ] || die "the companion file must name exactly one database file (it names ${#NAMED[@]}): nothing stopped" 2
  DB="${NAMED[0]}"
  [[ "$DB" =~ ^backups/[A-Za-z0-9_.-]+\.jsonl$ ]] || die "the companion file names '$DB', not a database file under backups/: nothing stopped" 2
  LISTING="$(tar -tzf "$ARCHIVE" 2>/dev/null)" || die "$ARCHIVE is not a readable archive: nothing stopped" 2
  grep -qx -- "$DB" <<<"$LISTING" || die "the archive does not hold $DB: nothing stopped" 2
  [ "$(grep -c '^backups/.*\.jsonl$' <<<"$LISTING")" -eq 1 ] || die "the archive holds more than one database file: nothing stopped" 2
fi

# 1. the current state, kept aside
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
ASIDE="$INSTANCE/archives/before-restore-$STAMP.tar.gz"
CURRENT=()
if podman container exists "$NAME-console"; then
  NOW="$(podman exec "$NAME-console" /usr/local/bin/node /app/main.js admin backup)" || die "could not copy the current database: nothing stopped"
  CURRENT=("backups/$(basename "$NOW")")
fi
tar -C "$INSTANCE" -czf "$ASIDE" hdc.env config secrets "${CURRENT[@]}"
chmod 600 "$ASIDE"
[ ${#CURRENT[@]} -eq 1 ] && printf '%s\n' "${CURRENT[0]}" > "$ASIDE.database" && chmod 600 "$ASIDE.database"
say "current state kept aside: $ASIDE"

# 2. stop the console and its password service (the store keeps running for the restore)
remove_containers console password-service
say "console stopped"

# 3. restore
if [ -z "$ONLY_DB" ]; then
  tar -C "$INSTANCE" --same-owner -xzf "$ARCHIVE" hdc.env config secrets "$DB"
  load_env
  podman_conf
fi
start_db
# the store may still be starting: the restore is retried (it replaces the whole table each time)
restored=""
for _ in $(seq 1 30); do
  if admin restore-database "/backups/$(basename "$DB")" --confirm; then restored=1; break; fi
  sleep 2
done
[ -n "$restored" ] || die "the database was not restored; the previous state is in $ASIDE"

# 4. start and wait until healthy
start_all
wait_healthy 120 || die "the console did not become healthy after the restore; the previous state is in $ASIDE"
say "restored from ${ARCHIVE:-$DB}"
