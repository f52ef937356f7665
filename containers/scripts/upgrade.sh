#!/usr/bin/env bash
# upgrade.sh '<repository>:<tag>'  (or just '<tag>': the instance keeps its repository)
# As the fleet plane's upgrade packs call it, from the instance directory: backs up first, pins the
# new image in hdc.env, recreates the containers, waits until healthy; prints how to roll back when
# anything fails. Pending database migrations run at the console's start, after their own copy.
set -euo pipefail
INSTANCE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
. "$INSTANCE/common.sh"
[ $# -eq 1 ] || die "usage: upgrade.sh '<repository>:<tag>'" 2
ARG="$1"
load_env
podman_conf
OLD_REPOSITORY="$REPOSITORY"; OLD_TAG="$TAG"
case "$ARG" in
  *:*) NEW_TAG="${ARG##*:}"; NEW_REPOSITORY="${ARG%:*}" ;;
  *) NEW_TAG="$ARG"; NEW_REPOSITORY="$REPOSITORY" ;;
esac
[ -n "$NEW_REPOSITORY" ] || NEW_REPOSITORY="$REPOSITORY"
if ! [[ "$NEW_TAG" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || [ "$NEW_TAG" = latest ]; then die "'$NEW_TAG' is not an image tag (never latest)" 2; fi
[[ "$NEW_REPOSITORY" =~ ^[a-z0-9]([a-z0-9._:/-]*[a-z0-9])?$ ]] || die "'$NEW_REPOSITORY' is not an image repository" 2
REPOSITORY="$NEW_REPOSITORY"; TAG="$NEW_TAG"
for i in hdc-console hdc-password-service hdc-dynamodb; do
  podman image exists "$(image "$i")" || podman pull -q "$(image "$i")" >/dev/null 2>&1 || die "image $(image "$i") not found: nothing changed"
done
rollback() {
  echo "" >&2
  echo "UPGRADE FAILED: the console did not become healthy on $NEW_REPOSITORY:$NEW_TAG." >&2
  echo "To roll back to $OLD_REPOSITORY:$OLD_TAG:" >&2
  echo "  cd $INSTANCE && ./upgrade.sh '$OLD_REPOSITORY:$OLD_TAG'" >&2
  [ -n "${COPY:-}" ] && echo "If the new version migrated the database, restore the copy taken first, then start the old version:" >&2 &&
    echo "  cd $INSTANCE && ./restore.sh --database '$COPY' && ./upgrade.sh '$OLD_REPOSITORY:$OLD_TAG'" >&2
  echo "Logs: podman logs $NAME-console" >&2
  exit 1
}
# 1. backup first (a consistent database copy; nothing changes when it fails)
if podman container exists "$NAME-console"; then
  COPY="$(podman exec "$NAME-console" /usr/local/bin/node /app/main.js admin backup)" || die "backup failed: nothing changed"
  say "database copy: $COPY"
fi
# 2. pin the new image
sed -i -e "s|^HDC_IMAGE_REPOSITORY=.*|HDC_IMAGE_REPOSITORY=$NEW_REPOSITORY|" -e "s|^HDC_IMAGE_TAG=.*|HDC_IMAGE_TAG=$NEW_TAG|" "$INSTANCE/hdc.env"
say "pinned $NEW_REPOSITORY:$NEW_TAG (was $OLD_REPOSITORY:$OLD_TAG)"
# 3. recreate (the store keeps running: its data stays in the volume)
remove_containers console password-service
start_all || rollback
# 4. wait until healthy
wait_healthy 120 || rollback
say "upgraded to $NEW_REPOSITORY:$NEW_TAG"
