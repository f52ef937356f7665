#!/usr/bin/env bash
# fleet-upgrade.sh '<repository>:<tag>'  (or just '<tag>': the instance keeps its repository)
# From the fleet instance directory: a copy of the store first (nothing changes when it fails),
# the new image pinned in hdc-fleet.env, the container recreated, then it waits until healthy and
# prints how to roll back when anything fails.
set -euo pipefail
INSTANCE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
. "$INSTANCE/common.sh"
# shellcheck source=fleet.sh
. "$INSTANCE/fleet.sh"
[ $# -eq 1 ] || die "usage: fleet-upgrade.sh '<repository>:<tag>'" 2
ARG="$1"
load_fleet_env
podman_conf
OLD_REPOSITORY="$REPOSITORY"; OLD_TAG="$TAG"
case "$ARG" in
  *:*) NEW_TAG="${ARG##*:}"; NEW_REPOSITORY="${ARG%:*}" ;;
  *) NEW_TAG="$ARG"; NEW_REPOSITORY="$REPOSITORY" ;;
esac
[ -n "$NEW_REPOSITORY" ] || NEW_REPOSITORY="$REPOSITORY"
valid_tag "$NEW_TAG" || die "'$NEW_TAG' is not an image tag (never latest)" 2
valid_repo "$NEW_REPOSITORY" || die "'$NEW_REPOSITORY' is not an image repository" 2
REPOSITORY="$NEW_REPOSITORY"; TAG="$NEW_TAG"
podman image exists "$(image hdc-fleet)" || podman pull -q "$(image hdc-fleet)" >/dev/null 2>&1 || die "image $(image hdc-fleet) not found: nothing changed"
rollback() {
  echo "" >&2
  echo "UPGRADE FAILED: the fleet plane did not become healthy on $NEW_REPOSITORY:$NEW_TAG." >&2
  echo "To roll back to $OLD_REPOSITORY:$OLD_TAG:" >&2
  echo "  cd $INSTANCE && ./fleet-upgrade.sh '$OLD_REPOSITORY:$OLD_TAG'" >&2
  [ -n "${COPY:-}" ] && echo "If the new version changed the store, restore the copy taken first, then start the old version:" >&2 &&
    echo "  cd $INSTANCE && ./fleet-restore.sh --database '$COPY' && ./fleet-upgrade.sh '$OLD_REPOSITORY:$OLD_TAG'" >&2
  echo "Logs: podman logs $NAME-fleet" >&2
  exit 1
}
# 1. a copy of the store first (SQLite's online backup; nothing changes when it fails)
if podman container exists "$NAME-fleet"; then
  COPY="$(fleet_backup)" || die "backup failed: nothing changed"
  say "store copy: $COPY"
fi
# 2. pin the new image
set_env_value "$INSTANCE/hdc-fleet.env" HDC_IMAGE_REPOSITORY "$NEW_REPOSITORY"
set_env_value "$INSTANCE/hdc-fleet.env" HDC_IMAGE_TAG "$NEW_TAG"
say "pinned $NEW_REPOSITORY:$NEW_TAG (was $OLD_REPOSITORY:$OLD_TAG)"
# 3. recreate, 4. wait until healthy
remove_containers fleet
start_fleet || rollback
wait_fleet_healthy 90 || rollback
say "upgraded to $NEW_REPOSITORY:$NEW_TAG"
