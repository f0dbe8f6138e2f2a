#!/usr/bin/env bash
# podman as it works on this project's machines (Debian's podman 4.3, as root, inside a container): crun fails
# here (setrlimit RLIMIT_NOFILE, then "cgroups in hybrid mode not supported"), so runc with explicit ulimits;
# and a store of our own under FERRY_CI_CACHE (default /var/tmp/ferry-ci), outside any clone, so that images and
# build layers survive between CI runs on the same machine. Usage: scripts/container/podman.sh <podman args…>
set -euo pipefail
cache=${FERRY_CI_CACHE:-/var/tmp/ferry-ci}
mkdir -p "$cache/storage" "$cache/run"
if [ ! -f "$cache/containers.conf" ]; then
  cat > "$cache/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
fi
if [ ! -f "$cache/storage.conf" ]; then
  cat > "$cache/storage.conf" <<CONF
[storage]
driver = "${FERRY_PODMAN_DRIVER:-overlay}"
graphroot = "$cache/storage"
runroot = "$cache/run"
CONF
fi
export CONTAINERS_CONF="$cache/containers.conf" CONTAINERS_STORAGE_CONF="$cache/storage.conf"
exec podman "$@"
