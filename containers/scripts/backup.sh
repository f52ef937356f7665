#!/usr/bin/env bash
# backup.sh: one archive (mode 0600) of the instance: a point-in-time copy of each store (the
# console's by its `admin backup`, the password service's by its image's `backup`: SQLite's online
# backup, taken while both run), the secrets folders (master key, link key, reset and LAPS
# passwords, the host's tunnel and DNS credentials), the console's own certificate (tls/, when it
# has one), the environment file and the configuration; beside it the companion file
# <archive>.database naming the console's database file (console spec: exactly one under the data
# backups folder; the password service's copy is under service-backups/). As sensitive as the secrets.
set -euo pipefail
INSTANCE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
. "$INSTANCE/common.sh"
load_env
podman_conf
[ "$STORE" = sqlite ] || die "this instance keeps its data in DynamoDB Local: upgrade it first (upgrade.sh)"
podman container exists "$NAME-console" || die "the console container $NAME-console is not running"
podman container exists "$NAME-password-service" || die "the password service container $NAME-password-service is not running"
COPY="$(podman exec "$NAME-console" /usr/local/bin/node /app/main.js admin backup)" || die "database copy failed: no archive written"
DB="backups/$(basename "$COPY")"
[ -f "$INSTANCE/$DB" ] || die "the database copy $DB is not in $INSTANCE/backups"
SCOPY="$(podman exec "$NAME-password-service" /usr/local/bin/node /app/main.js backup)" || die "the password service's copy failed: no archive written"
SDB="service-backups/$(basename "$SCOPY")"
[ -f "$INSTANCE/$SDB" ] || die "the password service's copy $SDB is not in $INSTANCE/service-backups"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
ARCHIVE="$INSTANCE/archives/$NAME-$STAMP.tar.gz"
# the console's own certificate (--tls acme-dns) with the rest
EXTRA=(); [ -d "$INSTANCE/tls" ] && EXTRA+=(tls)
tar -C "$INSTANCE" -czf "$ARCHIVE.part" hdc.env config secrets "${EXTRA[@]}" "$DB" "$SDB"
chmod 600 "$ARCHIVE.part"
mv "$ARCHIVE.part" "$ARCHIVE"
printf '%s\n' "$DB" > "$ARCHIVE.database"
chmod 600 "$ARCHIVE.database"
say "archive: $ARCHIVE"
echo "$ARCHIVE"
