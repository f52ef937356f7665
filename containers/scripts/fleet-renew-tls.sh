#!/usr/bin/env bash
# fleet-renew-tls.sh [install-tls options, e.g. --renew-before-days N]
# Daily (a systemd timer or cron): renews the fleet plane's certificate by DNS-01 when it expires
# within 30 days (install-tls, with the DNS credentials kept in secrets/acme-dns.env), gives the
# new key to the container user (0600); the running container serves it without a restart.
set -euo pipefail
INSTANCE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
. "$INSTANCE/common.sh"
# shellcheck source=fleet.sh
. "$INSTANCE/fleet.sh"
load_fleet_env
podman_conf
[ "$HDC_TLS" = acme-dns ] || die "this fleet plane has no certificate of its own (--tls none)" 2
code=0
run_install_tls "" "$@" || code=$?
own_certificate
[ "$code" -eq 0 ] || die "the renewal failed (install-tls above); the current certificate is still served" "$code"
say "certificate: $(openssl x509 -in "$INSTANCE/tls/fullchain.pem" -noout -enddate 2>/dev/null || echo "$INSTANCE/tls/fullchain.pem")"
