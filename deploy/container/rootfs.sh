#!/bin/sh
# Assembles the container image's root filesystem in the directory $1, except the binary, which
# is built into $1/mgmtapi separately. The image is FROM scratch, so this is everything it holds:
#   /etc/ssl/certs/ca-certificates.crt  for PostgreSQL over verified TLS (sslmode=verify-full)
#   /etc/passwd, /etc/group             name the unprivileged user 65532 (mgmtapi)
#   /data                               the SQLite data directory, owned by that user
#   /tmp                                where SQLite puts temporary files of large sorts
# Used by the Dockerfile's build stage and by deploy/container/check; run as root (it chowns).
set -eu
root=${1:?usage: rootfs.sh DIR}
mkdir -p "$root/etc/ssl/certs" "$root/data" "$root/tmp"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/nonexistent\nmgmtapi:x:65532:65532:mgmtapi:/data:/nonexistent\n' >"$root/etc/passwd"
printf 'root:x:0:\nmgmtapi:x:65532:\n' >"$root/etc/group"
chown 65532:65532 "$root/data"
chmod 0750 "$root/data"
chmod 1777 "$root/tmp"
