#!/usr/bin/env bash
# backup.sh: one archive (mode 0600) of the instance: a consistent database copy (taken by the
# console's `admin backup`), the secrets folders (master key, link key, reset and LAPS passwords),
# the environment file and the configuration; beside it the companion file <archive>.database
# naming the one database file it holds. As sensitive as the secrets it contains.
set -euo pipefail
INSTANCE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
. "$INSTANCE/common.sh"
load_env
podman_conf
podman container exists "$NAME-console" || die "the console container $NAME-console is not running"
COPY="$(podman exec "$NAME-console" /usr/local/bin/node /app/main.js admin backup)" || die "database copy failed: no archive written"
DB="backups/$(basename "$COPY")"
[ -f "$INSTANCE/$DB" ] || die "the database copy $DB is not in $INSTANCE/backups"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
ARCHIVE="$INSTANCE/archives/$NAME-$STAMP.tar.gz"
tar -C "$INSTANCE" -czf "$ARCHIVE.part" hdc.env config secrets "$DB"
chmod 600 "$ARCHIVE.part"
mv "$ARCHIVE.part" "$ARCHIVE"
printf '%s\n' "$DB" > "$ARCHIVE.database"
chmod 600 "$ARCHIVE.database"
say "archive: $ARCHIVE"
echo "$ARCHIVE"
