#!/usr/bin/env bash
# Console upgrade, from an upgrade pack of the fleet plane (the fleet plane never runs it: an
# administrator of the client's host does).
#
# Usage, in the console folder (the one holding the environment file .env and compose.yaml):
#   ./upgrade.sh '<repository>:<tag>'   run that image
#   ./upgrade.sh '<tag>'                keep the repository named in .env, change the tag only
#
# Steps: back up the folder (backups/, mode 0600), pull the new image, pin it in .env
# (HDC_IMAGE=...), recreate the containers, wait until they are healthy. On failure it prints
# how to roll back. Exit codes: 0 upgraded (or already there), 2 usage or not a console folder,
# 3 the image could not be pulled (nothing changed), 4 recreate or health check failed.
#
# Environment: HDC_CONTAINER_CLI (podman or docker; default: podman if installed, else docker),
# HDC_UPGRADE_WAIT_SECONDS (default 300), HDC_UPGRADE_POLL_SECONDS (default 5).
set -euo pipefail

readonly ENV_FILE=.env
readonly IMAGE_VAR=HDC_IMAGE
readonly WAIT_SECONDS=${HDC_UPGRADE_WAIT_SECONDS:-300}
readonly POLL_SECONDS=${HDC_UPGRADE_POLL_SECONDS:-5}
readonly TAG_RE='^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$'
readonly REPO_RE='^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*$'

die() {
  printf 'upgrade: %s\n' "$1" >&2
  exit "${2:-2}"
}

[ $# -eq 1 ] || die "usage: ./upgrade.sh '<repository>:<tag>' or ./upgrade.sh '<tag>'"
arg=$1

[ -f "$ENV_FILE" ] || die "no $ENV_FILE in $(pwd): run this from the console folder"
compose_file=""
for f in compose.yaml compose.yml docker-compose.yaml docker-compose.yml; do
  if [ -f "$f" ]; then
    compose_file=$f
    break
  fi
done
[ -n "$compose_file" ] || die "no compose file in $(pwd): run this from the console folder"

current=$(sed -n "s/^${IMAGE_VAR}=//p" "$ENV_FILE" | tail -n 1 | tr -d "\"'")
[ -n "$current" ] || die "$ENV_FILE has no ${IMAGE_VAR}= line"

# the new image: '<repository>:<tag>', or a tag alone on the repository of .env
last=${arg##*/}
if [[ $last == *:* ]]; then
  repo=${arg%:*}
  tag=${arg##*:}
else
  repo=${current%%@*}
  [[ ${repo##*/} == *:* ]] && repo=${repo%:*}
  tag=$arg
fi
[[ $tag =~ $TAG_RE ]] || die "not an image tag: $tag"
[ "${tag,,}" != latest ] || die "latest names no version: give the tag to run"
[[ $repo =~ $REPO_RE ]] || die "not an image repository: $repo"
new="$repo:$tag"

if [ "$current" = "$new" ]; then
  printf 'upgrade: %s already runs %s; nothing to do\n' "$(pwd)" "$new"
  exit 0
fi

if [ -n "${HDC_CONTAINER_CLI:-}" ]; then
  cli=$HDC_CONTAINER_CLI
elif command -v podman >/dev/null 2>&1; then
  cli=podman
elif command -v docker >/dev/null 2>&1; then
  cli=docker
else
  die "neither podman nor docker is installed"
fi
compose() { "$cli" compose -f "$compose_file" "$@"; }

# 1. back up first: the folder (environment file, config, secrets), readable by the owner only
stamp=$(date -u +%Y%m%dT%H%M%SZ)
umask 077
mkdir -p backups
backup="backups/before-upgrade-$stamp.tar.gz"
env_copy="backups/env-before-upgrade-$stamp"
tar --exclude=./backups -czf "$backup" .
cp -p "$ENV_FILE" "$env_copy"
chmod 600 "$backup" "$env_copy"
printf 'upgrade: backup %s\n' "$backup"

# 2. the new image, before anything changes
if ! "$cli" pull "$new"; then
  die "could not pull $new; nothing was changed" 3
fi

rollback() {
  cat >&2 <<MSG
upgrade: $1
The console did not come back healthy on $new. To roll back to $current, in $(pwd):
  cp '$env_copy' '$ENV_FILE'
  $cli compose -f '$compose_file' up -d --force-recreate
If the new version already migrated the database and the previous one refuses it, restore
the console's backup (the console copies its database before migrating) and the folder
archive '$backup' as the console's restore procedure describes.
MSG
  exit 4
}

# 3. pin the new image in the environment file (same file, same mode and owner)
tmp=$(mktemp "./.env.upgrade.XXXXXX")
awk -v var="$IMAGE_VAR" -v img="$new" 'BEGIN { done = 0 } index($0, var "=") == 1 { if (!done) print var "=" img; done = 1; next } { print } END { if (!done) print var "=" img }' "$ENV_FILE" >"$tmp"
cat "$tmp" >"$ENV_FILE"
rm -f "$tmp"
printf 'upgrade: %s pinned to %s (was %s)\n' "$ENV_FILE" "$new" "$current"

# 4. recreate, 5. wait until every container is healthy (running, when it has no health check)
compose up -d --force-recreate || rollback "recreating the containers failed"

healthy() {
  local ids id state health status
  ids=$(compose ps -q) || return 1
  [ -n "$ids" ] || return 1
  for id in $ids; do
    state=$("$cli" inspect --format '{{if .State.Health}}{{.State.Health.Status}}{{end}}|{{.State.Status}}' "$id" 2>/dev/null) || return 1
    health=${state%%|*}
    status=${state##*|}
    case "$health" in
      healthy) ;;
      unhealthy) return 2 ;;
      "")
        case "$status" in
          running) ;;
          exited | dead) return 2 ;;
          *) return 1 ;;
        esac
        ;;
      *) return 1 ;;
    esac
  done
  return 0
}

deadline=$((SECONDS + WAIT_SECONDS))
while :; do
  rc=0
  healthy || rc=$?
  [ "$rc" -eq 0 ] && break
  [ "$rc" -eq 2 ] && rollback "a container is unhealthy or stopped"
  [ "$SECONDS" -lt "$deadline" ] || rollback "not healthy after ${WAIT_SECONDS}s"
  sleep "$POLL_SECONDS"
done

printf 'upgrade: %s now runs %s (was %s); backup %s\n' "$(pwd)" "$new" "$current" "$backup"
