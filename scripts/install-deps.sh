#!/usr/bin/env bash
# Installs inferscope's build and test dependencies from Debian packages (bookworm or newer).
# Run as root, or with sudo available. Idempotent: already-installed packages are left alone.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  clang clang-format clang-tidy libclang-rt-14-dev   # libFuzzer + sanitizer runtimes
  libsimdjson-dev libsqlite3-dev sqlite3 zlib1g-dev libzstd-dev
  protobuf-compiler                                  # protoc --decode checks `export` (tests/perfetto)
  libcli11-dev libfmt-dev libcpp-httplib-dev
  libboost-dev                                       # Boost.Beast: the agent's HTTP listener
  libssl-dev openssl                                 # clickhouses:// (cpp-httplib's TLS); openssl
                                                     # makes the TLS test's certificate
  libgtest-dev libgmock-dev libbenchmark-dev
  python3                                            # tools/ and the golden comparison
  prometheus                                         # a real Prometheus scrapes /metrics in a test
  chromium                                           # the dashboard's browser test (tests/ui)
  clickhouse-server                                  # the fleet sink's tests (docs/fleet.md)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm run the OpenTelemetry SDK exporter of the span test (tests/otel, packages from
# npm) and bundle the dashboard (web/, at build time). Only when no node/npm is on PATH: a Node.js from elsewhere (with its own npm) is fine, and
# Debian's npm package would conflict with it.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  for p in nodejs npm; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present"
else
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# CUDA 12.4's CUPTI (libcupti-dev, libcupti12) from Debian's non-free section of the newer release
# (trixie), unpacked into .deps/cupti-12.4 of this checkout: the decoder is compiled against its
# headers and the binding tests load its libcupti.so.12 (the toolkit in /usr/local/cuda is 13.x).
# A private apt configuration under .deps/apt: the machine's apt sources are never changed, and
# nothing is installed system-wide. The archive is the one this machine's apt already uses.
# Optional: without it (no network, no trixie) those checks are skipped and say so.
CUPTI12=.deps/cupti-12.4
if [[ ! -f "$CUPTI12/usr/include/cupti.h" ]]; then
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources \
             2>/dev/null | head -n 1)
  [[ -n "$mirror" ]] || mirror=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' \
                                   /etc/apt/sources.list 2>/dev/null)
  apt_dir=$PWD/.deps/apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc/sources.list.d" \
           "$apt_dir/etc/preferences.d" "$CUPTI12"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} trixie non-free" \
    > "$apt_dir/etc/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list"
            -o "Dir::Etc::SourceParts=$apt_dir/etc/sources.list.d"
            -o "Dir::Etc::Preferences=$apt_dir/etc/preferences"
            -o "Dir::Etc::PreferencesParts=$apt_dir/etc/preferences.d"
            -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
            -o "APT::Sandbox::User=root")
  if [[ -n "$mirror" ]] && apt-get "${apt_opts[@]}" update -qq 2>/dev/null \
      && (cd "$apt_dir" && apt-get "${apt_opts[@]}" download -qq libcupti-dev libcupti12); then
    for deb in "$apt_dir"/libcupti*.deb; do dpkg-deb -x "$deb" "$CUPTI12"; done
    rm -f "$apt_dir"/libcupti*.deb "$CUPTI12"/usr/lib/*/*_static.a  # only headers + .so are used
    echo "install-deps: CUDA 12.4 CUPTI unpacked into $CUPTI12"
  else
    echo "install-deps: could not fetch libcupti-dev/libcupti12 (trixie non-free); the CUDA 12.4" \
         "CUPTI checks will be skipped"
  fi
fi
