#!/bin/sh
# Install the named Debian packages that are not installed yet (needs root; apt-get update runs once).
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "hayate: missing Debian packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
    exit 1
fi
echo "hayate: installing Debian packages:$missing" >&2
apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
