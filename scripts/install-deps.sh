#!/usr/bin/env bash
# Installs inferscope's build and test dependencies from Debian packages (bookworm or newer).
# Run as root, or with sudo available. Idempotent: already-installed packages are left alone.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  clang clang-format clang-tidy libclang-rt-14-dev   # libFuzzer + sanitizer runtimes
  libsimdjson-dev libsqlite3-dev sqlite3 zlib1g-dev libdeflate-dev
  libcli11-dev libfmt-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3                                            # tools/ and the golden comparison
  prometheus                                         # a real Prometheus scrapes /metrics in a test
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm run the OpenTelemetry SDK exporter of the span test (tests/otel, packages from
# npm). Only when no node/npm is on PATH: a Node.js from elsewhere (with its own npm) is fine, and
# Debian's npm package would conflict with it.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  for p in nodejs npm; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
