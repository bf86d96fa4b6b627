#!/usr/bin/env bash
# A PyTorch 2.x on a machine whose Debian (12) has only 1.13: Debian 13's python3-torch (2.6, CPU)
# and torchvision in a root folder made by debootstrap, and a `python` in front of it that runs
# Python there on this machine's files. It is what the torch 2.x checks run on without the GPU
# machine: torch.compile adapters (inductor, aot-eager) and models saved by PyTorch 2.x
# (docs/adapters.md, docs/importing.md; ci/torch2_checks.sh runs them).
#   ci/torch2_env.sh [DIR]      (default $GBCHECK_TORCH2_DIR, else ~/.cache/gbcheck/torch2)
# writes DIR/root (about 2.2 GB, 2-3 minutes from Debian's archive) and DIR/python, and prints the
# python's path: give it as GBCHECK_TORCH2_PYTHON (the torch 2.x tests) or GBCHECK_PYTHON (every
# adapter). Making the root needs root; the python needs root or unprivileged user namespaces
# (unshare, chroot). Run again, it only writes the python and checks that torch 2.x imports.
set -euo pipefail
dir=${1:-${GBCHECK_TORCH2_DIR:-$HOME/.cache/gbcheck/torch2}}
repo=$(cd "$(dirname "$0")/.." && pwd)
mirror=${GBCHECK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$dir/root
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
root=$dir/root

if [ ! -e "$root/.gbcheck-complete" ]; then
  # debootstrap and dpkg set owners and device nodes: making the root needs real root (using it
  # does not).
  [ "$(id -u)" = 0 ] || { echo "torch2_env: making $root needs root (debootstrap, dpkg); run it once as root" >&2; exit 4; }
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
  echo "torch2_env: making a Debian 13 (trixie) root in $root" >&2
  rm -rf "$root"
  debootstrap --variant=minbase trixie "$root" "$mirror" >"$dir/debootstrap.log" 2>&1 ||
    { tail -5 "$dir/debootstrap.log" >&2; exit 4; }
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  # setuptools and libtorch-dev: inductor compiles its C++ kernels with torch's headers.
  unshare -m sh -c 'for d in /proc /dev /sys; do mount --rbind "$d" "$0$d" || exit 4; done
    exec chroot "$0" apt-get install -y -q --no-install-recommends python3-torch python3-torchvision python3-setuptools libtorch-dev g++ python3-dev' "$root" \
    >"$dir/apt.log" 2>&1 || { tail -5 "$dir/apt.log" >&2; exit 4; }
  touch "$root/.gbcheck-complete"
fi

# The python: a private mount namespace binds this repository, the caller's folder and /tmp at
# their own paths inside the root (adapter scripts, models and a test's files keep their names),
# and this machine's /proc, /dev and /sys (torch reads the CPUs there), then runs python3 there in the caller's folder.
cat >"$dir/python" <<EOF
#!/bin/sh
# python3 of $root (PyTorch 2.x), written by ci/torch2_env.sh.
exec unshare -rm sh -c '
  root=\$0
  for d in "$repo" "\$PWD" /tmp; do
    mkdir -p "\$root\$d" && mount --bind "\$d" "\$root\$d" || exit 4
  done
  for d in /proc /dev /sys; do mount --rbind "\$d" "\$root\$d" || exit 4; done
  exec chroot "\$root" sh -c "cd \\"\\\$0\\" && exec python3 \\"\\\$@\\"" "\$PWD" "\$@"
' "$root" "\$@"
EOF
chmod +x "$dir/python"
"$dir/python" -c 'import torch, torchvision; assert torch.__version__ >= "2"' >/dev/null ||
  { echo "torch2_env: $dir/python cannot import torch 2.x" >&2; exit 4; }
echo "$dir/python"
