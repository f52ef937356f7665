#!/usr/bin/env bash
# fleet-backup.sh: one archive (mode 0600) of the fleet instance: a point-in-time copy of its store
# (SQLite's online backup, taken while it runs), its secrets (master key, channel key, identity,
# the DNS credentials kept for renewals, the ACME account key), its certificate, the environment
# file and the configuration; beside it the companion <archive>.database naming the one database
# file it holds. As sensitive as the secrets it contains.
set -euo pipefail
INSTANCE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
. "$INSTANCE/common.sh"
# shellcheck source=fleet.sh
. "$INSTANCE/fleet.sh"
load_fleet_env
podman_conf
podman container exists "$NAME-fleet" || die "the fleet container $NAME-fleet is not running"
DB="$(fleet_backup)" || die "the store copy failed: no archive written"
ARCHIVE="$INSTANCE/archives/$NAME-$(date -u +%Y%m%dT%H%M%SZ).tar.gz"
tar -C "$INSTANCE" -czf "$ARCHIVE.part" hdc-fleet.env config secrets tls "$DB"
chmod 600 "$ARCHIVE.part"
mv "$ARCHIVE.part" "$ARCHIVE"
printf '%s\n' "$DB" > "$ARCHIVE.database"
chmod 600 "$ARCHIVE.database"
say "archive: $ARCHIVE"
echo "$ARCHIVE"
