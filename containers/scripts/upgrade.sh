#!/usr/bin/env bash
# upgrade.sh [--instance DIR] '<repository>:<tag>'  (or just '<tag>': the instance keeps its repository)
# As the fleet plane's upgrade packs call it, from the instance directory: backs up first, pins the
# new image in hdc.env, recreates the containers, waits until healthy; prints how to roll back when
# anything fails. Pending database migrations run at the console's start, after their own copy.
# An instance installed before the embedded store (DynamoDB Local in its own container) has its
# data moved into the two SQLite files on the way: the console's copy of the shared table (JSON
# lines) is cut in two and loaded into each store; data/db is left as it was, for a rollback.
# Run from a newer release's folder with --instance DIR, its scripts replace the instance's.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
INSTANCE="$HERE"
if [ "${1:-}" = --instance ]; then
  if [ $# -lt 2 ] || [ ! -d "$2" ]; then echo "error: --instance DIR: an instance directory" >&2; exit 2; fi
  INSTANCE="$(cd "$2" && pwd)"; shift 2
fi
# shellcheck source=common.sh
. "$HERE/common.sh"
[ $# -eq 1 ] || die "usage: upgrade.sh [--instance DIR] '<repository>:<tag>'" 2
ARG="$1"
load_env
podman_conf
OLD_REPOSITORY="$REPOSITORY"; OLD_TAG="$TAG"; OLD_STORE="$STORE"
case "$ARG" in
  *:*) NEW_TAG="${ARG##*:}"; NEW_REPOSITORY="${ARG%:*}" ;;
  *) NEW_TAG="$ARG"; NEW_REPOSITORY="$REPOSITORY" ;;
esac
[ -n "$NEW_REPOSITORY" ] || NEW_REPOSITORY="$REPOSITORY"
valid_tag "$NEW_TAG" || die "'$NEW_TAG' is not an image tag (never latest)" 2
valid_repo "$NEW_REPOSITORY" || die "'$NEW_REPOSITORY' is not an image repository" 2
REPOSITORY="$NEW_REPOSITORY"; TAG="$NEW_TAG"
for i in hdc-console hdc-password-service; do
  podman image exists "$(image "$i")" || podman pull -q "$(image "$i")" >/dev/null 2>&1 || die "image $(image "$i") not found: nothing changed"
done
# a store move can be undone only with the previous version's own files: kept before anything changes
ASIDE="${HDC_BEFORE_UPGRADE:-}"
[ -z "$ASIDE" ] && [ "$OLD_STORE" != sqlite ] && ASIDE="$(keep_aside before-upgrade)"
# this release's scripts in the instance (run from another folder: a newer release's)
[ "$HERE" -ef "$INSTANCE" ] || install_scripts "$HERE" "${CONSOLE_SCRIPTS[@]}"

rollback() {
  echo "" >&2
  echo "UPGRADE FAILED: the console did not become healthy on $NEW_REPOSITORY:$NEW_TAG." >&2
  echo "To roll back to $OLD_REPOSITORY:$OLD_TAG:" >&2
  if [ "$OLD_STORE" != sqlite ]; then
    # the previous version's store (DynamoDB Local, data/db) was only read: its files and scripts back
    echo "  cd $INSTANCE && tar -xzf '$ASIDE' && ./install.sh --instance $INSTANCE" >&2
  else
    echo "  cd $INSTANCE && ./upgrade.sh '$OLD_REPOSITORY:$OLD_TAG'" >&2
    [ -n "${COPY:-}" ] && echo "If the new version migrated the database, restore the copy taken first, then start the old version:" >&2 &&
      echo "  cd $INSTANCE && ./restore.sh --database '$COPY' && ./upgrade.sh '$OLD_REPOSITORY:$OLD_TAG'" >&2
  fi
  echo "Logs: podman logs $NAME-console" >&2
  exit 1
}
# 1. backup first (a consistent database copy; nothing changes when it fails)
if podman container exists "$NAME-console"; then
  # by the running console; a console that is not running (a version that did not start: this is
  # its rollback) leaves its file at rest, copied by a one-off container of the image pinned next
  COPY="$(podman exec "$NAME-console" /usr/local/bin/node /app/main.js admin backup 2>/dev/null)" ||
    { [ "$OLD_STORE" = sqlite ] && COPY="$(console_store_command admin backup)"; } || die "backup failed: nothing changed"
  say "database copy: $COPY"
elif [ "$OLD_STORE" != sqlite ]; then
  die "the console $NAME-console is not running: its data cannot be copied out of DynamoDB Local: nothing changed"
fi
# 2. pin the new image (and the embedded store)
set_env_value "$INSTANCE/hdc.env" HDC_IMAGE_REPOSITORY "$NEW_REPOSITORY"
set_env_value "$INSTANCE/hdc.env" HDC_IMAGE_TAG "$NEW_TAG"
set_env_value "$INSTANCE/hdc.env" HDC_STORE sqlite
say "pinned $NEW_REPOSITORY:$NEW_TAG (was $OLD_REPOSITORY:$OLD_TAG)"
# 3. recreate, with the data moved first when it was in DynamoDB Local
remove_containers console password-service
if [ "$OLD_STORE" != sqlite ]; then
  say "moving the data from DynamoDB Local into the console's and the password service's SQLite files"
  ensure_folders
  ensure_networks || rollback
  load_shared_copy "$(basename "$COPY")" || rollback
fi
start_all || rollback
# 4. wait until healthy
wait_healthy 120 || rollback
if [ "$OLD_STORE" != sqlite ]; then
  remove_containers db
  say "DynamoDB Local ($NAME-db) stopped; its data stays in $INSTANCE/data/db until you delete it"
fi
say "upgraded to $NEW_REPOSITORY:$NEW_TAG"
