#!/usr/bin/env bash
# renew-tls.sh [install-tls options, e.g. --renew-before-days N]
# Daily (a systemd timer or cron): renews the console's own certificate by DNS-01 when it expires
# within 30 days (install-tls, with the DNS credentials kept in secrets/acme-dns.env), gives the
# new key to the console's container user (0600); the running console serves it without a restart.
set -euo pipefail
INSTANCE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
. "$INSTANCE/common.sh"
load_env
podman_conf
[ "${HDC_TLS:-none}" = acme-dns ] || die "this console has no certificate of its own (--tls none)" 2
code=0
console_install_tls "" "$@" || code=$?
own_certificate
[ "$code" -eq 0 ] || die "the renewal failed (install-tls above); the current certificate is still served" "$code"
say "certificate: $(openssl x509 -in "$INSTANCE/tls/fullchain.pem" -noout -enddate 2>/dev/null || echo "$INSTANCE/tls/fullchain.pem")"
