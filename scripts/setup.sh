# Sourced by scripts/nbx and scripts/test: install what the build needs, configure and build
# into build/. Extra meson options come from NBX_MESON_OPTIONS (e.g.
# NBX_MESON_OPTIONS="-Dcuda-archs=sm_80,sm_90 -Dhip=disabled").
set -euo pipefail
NBX_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NBX_BUILD="$NBX_ROOT/build"

nbx_missing_packages() {
  local pkg missing=()
  while read -r pkg; do
    [[ -z "$pkg" || "$pkg" == \#* ]] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done < "$NBX_ROOT/scripts/debian-packages.txt"
  echo "${missing[@]:-}"
}

nbx_install_packages() {
  local missing
  missing=$(nbx_missing_packages)
  [[ -z "$missing" ]] && return 0
  if [[ $(id -u) -ne 0 ]]; then
    echo "nbx: missing Debian packages. Run, as root:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends $missing" >&2
    exit 1
  fi
  echo "nbx: installing Debian packages: $missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $missing >&2
}

nbx_build() {
  # nvcc lives outside PATH on NVIDIA's installs; -Dcuda=auto finds it there too.
  if [[ -x /usr/local/cuda/bin/nvcc && ":$PATH:" != *":/usr/local/cuda/bin:"* ]]; then
    export PATH="$PATH:/usr/local/cuda/bin"
  fi
  if [[ ! -f "$NBX_BUILD/build.ninja" ]]; then
    # shellcheck disable=SC2086
    meson setup "$NBX_BUILD" "$NBX_ROOT" ${NBX_MESON_OPTIONS:-} >&2
  elif [[ -n "${NBX_MESON_OPTIONS:-}" ]]; then
    # shellcheck disable=SC2086
    meson configure "$NBX_BUILD" ${NBX_MESON_OPTIONS} >&2
  fi
  ninja -C "$NBX_BUILD" >&2
}

nbx_install_packages
nbx_build
