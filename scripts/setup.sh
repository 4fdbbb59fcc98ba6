#!/usr/bin/env bash
# Installs KernelFoundry's system dependencies from Debian's packages: what building it and
# running it need (scripts/run.sh), and with --tests what its test suite needs besides (headless
# Chromium with its driver and Selenium test the report's pages; PyTorch (CPU) and NumPy run
# `kfoundry import`'s inspection of PyTorch problems and its tests; pyopencl runs an exported
# module's OpenCL kernel on PoCL in `kfoundry export`'s tests; RabbitMQ, started on loopback
# by the `dist` tests, scripts/services-rabbitmq.sh; the PostgreSQL server runs the store's tests
# against PostgreSQL, scripts/services.sh starts it; strace shows that `optimize` opens no
# socket). Idempotent: a package already present is left alone, so a second run costs one dpkg
# query.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev
  libsqlite3-dev libsqlitecpp-dev libxxhash-dev zlib1g-dev libcurl4-openssl-dev
  ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  libgtest-dev libgmock-dev googletest
  python3
  libcpp-httplib-dev
  librabbitmq-dev
  libpq-dev
)
case "${1:-}" in
  --tests) packages+=(chromium chromium-driver python3-selenium python3-pil python3-torch python3-numpy
                   python3-pyopencl rabbitmq-server postgresql strace) ;;
  "") ;;
  *) echo "usage: scripts/setup.sh [--tests]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The CUDA backend needs only the toolkit headers to build (the driver and NVRTC are loaded at run
# time). Say where they were found, or that the CUDA backend is built from our own declarations.
if [ -f "${CUDA_PATH:-/usr/local/cuda}/include/cuda.h" ]; then
  echo "setup: CUDA headers at ${CUDA_PATH:-/usr/local/cuda}/include" >&2
else
  echo "setup: no CUDA toolkit headers; the CUDA backend is still built (run-time loaded)" >&2
fi
